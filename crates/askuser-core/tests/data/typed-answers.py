"""Writes typed-answers.jsonl, the corpus of the typed-answer grammar (docs/typed-answers.md).

Each case: the batch (tool-call arguments, and their profile), the reply as typed, and the outcome:
the answers (`header`, and `selected` or `custom_answer`), or `unclear`, the exact words sent back.
Hand-written cases, each also run through variants that must read the same (case, full width,
spacing, CRLF); a variant changes a typed answer only as it changes what was typed.

    python3 crates/askuser-core/tests/data/typed-answers.py > crates/askuser-core/tests/data/typed-answers.jsonl
"""
import json
import sys

DB = {"header": "Database", "question": "Which database?",
      "options": [{"label": "SQLite"}, {"label": "PostgreSQL"}, {"label": "MySQL"}]}
FEATURES = {"header": "Features", "question": "Which features?", "multi_select": True,
            "options": [{"label": "Auth"}, {"label": "Billing"}, {"label": "Search"}, {"label": "Admin panel"}]}
TIME = {"header": "Time", "question": "When?", "options": [{"label": "10:00"}, {"label": "14:00"}]}
MODE = {"header": "Mode", "question": "Which mode?",
        "options": [{"label": "Safe"}, {"label": "Safer"}, {"label": "Fast"}]}
DEPLOY = {"header": "Deploy", "question": "Where to?", "allow_other": False,
          "options": [{"label": "Staging"}, {"label": "Production"}]}
BRANCH = {"kind": "text", "header": "Branch", "question": "Which branch?"}
CHECKS = {"header": "Checks", "question": "Which checks?", "multi_select": True, "allow_other": False,
          "options": [{"label": "Lint"}, {"label": "Tests"}, {"label": "Bench"}]}
TOKEN = {"kind": "secret", "header": "Token", "question": "Your token?", "secret_name": "TOKEN", "purpose": "To deploy."}
NOTES = {"kind": "text", "header": "Notes", "question": "Anything else?"}

BATCHES = {
    "db": ("reference", [DB]),
    "features": ("reference", [FEATURES]),
    "db+features": ("reference", [DB, FEATURES]),
    "time": ("reference", [TIME]),
    "mode": ("reference", [MODE]),
    "deploy+branch+checks": ("extended", [DEPLOY, BRANCH, CHECKS]),
    "token": ("extended", [TOKEN]),
    "notes": ("extended", [NOTES]),
    "db+notes": ("extended", [dict(DB), NOTES]),
}


def picked(header, *labels):
    return {"header": header, "selected": list(labels)}


def typed(header, text):
    return {"header": header, "custom_answer": text}


# (batch, reply, answers or an unclear message, whether the variants apply)
CASES = [
    # One question: numbers, labels, prefixes, Other.
    ("db", "2", [picked("Database", "PostgreSQL")], True),
    ("db", "1", [picked("Database", "SQLite")], True),
    ("db", "3", [picked("Database", "MySQL")], True),
    ("db", "PostgreSQL", [picked("Database", "PostgreSQL")], True),
    ("db", "postgresql", [picked("Database", "PostgreSQL")], True),
    ("db", "Postgres", [picked("Database", "PostgreSQL")], True),
    ("db", "p", [picked("Database", "PostgreSQL")], True),
    ("db", "my", [picked("Database", "MySQL")], True),
    ("db", "Database: SQLite", [picked("Database", "SQLite")], True),
    ("db", "database: 3", [picked("Database", "MySQL")], True),
    ("db", "Other: Oracle", [typed("Database", "Oracle")], True),
    ("db", "other:   DuckDB, in memory", [typed("Database", "DuckDB, in memory")], True),
    ("db", "Database: Other: CockroachDB", [typed("Database", "CockroachDB")], True),
    ("db", "4", "Database: there is no option 4 (options are numbered 1 to 3).", True),
    ("db", "0", "Database: there is no option 0 (options are numbered 1 to 3).", True),
    ("db", "1,2", "Database: pick one option, not 2.", True),
    ("db", "1 3", "Database: pick one option, not 2.", True),
    ("db", "SQLite, MySQL", "Database: pick one option, not 2.", True),
    ("db", "Oracle", 'Database: "Oracle" is none of the options (1 SQLite, 2 PostgreSQL, 3 MySQL).', True),
    ("db", "", "The reply is empty: nothing was answered.", False),
    ("db", "   \n  ", "The reply is empty: nothing was answered.", False),
    ("db", "Other:", "Database: the answer is empty.", True),
    ("db", "Database:", "Database: the answer is empty.", True),
    ("db", "1, 1", [picked("Database", "SQLite")], True),
    # Multi-select.
    ("features", "1,3", [picked("Features", "Auth", "Search")], True),
    ("features", "1 3", [picked("Features", "Auth", "Search")], True),
    ("features", "1, 3", [picked("Features", "Auth", "Search")], True),
    ("features", "3,1", [picked("Features", "Search", "Auth")], True),
    ("features", "1;2;4", [picked("Features", "Auth", "Billing", "Admin panel")], True),
    ("features", "Auth, Search", [picked("Features", "Auth", "Search")], True),
    ("features", "auth; admin panel", [picked("Features", "Auth", "Admin panel")], True),
    ("features", "Admin", [picked("Features", "Admin panel")], True),
    ("features", "Admin panel", [picked("Features", "Admin panel")], True),
    ("features", "admin   panel", [picked("Features", "Admin panel")], True),
    ("features", "Auth\nBilling", [picked("Features", "Auth", "Billing")], True),
    ("features", "2", [picked("Features", "Billing")], True),
    ("features", "1,5", "Features: there is no option 5 (options are numbered 1 to 4).", True),
    ("features", "Auth, Payments",
     'Features: "Payments" is none of the options (1 Auth, 2 Billing, 3 Search, 4 Admin panel).', True),
    ("features", "Other: SSO", [typed("Features", "SSO")], True),
    ("features", "Features: 2, 4", [picked("Features", "Billing", "Admin panel")], True),
    # Two questions: keyed lines, positional lines, what is missing or unclear.
    ("db+features", "Database: SQLite\nFeatures: 1, 3",
     [picked("Database", "SQLite"), picked("Features", "Auth", "Search")], True),
    ("db+features", "Features: Search\nDatabase: 2",
     [picked("Database", "PostgreSQL"), picked("Features", "Search")], True),
    ("db+features", "data: mysql\nfeat: auth",
     [picked("Database", "MySQL"), picked("Features", "Auth")], True),
    ("db+features", "D: 1\nF: 2", [picked("Database", "SQLite"), picked("Features", "Billing")], True),
    ("db+features", "2\n1,3", [picked("Database", "PostgreSQL"), picked("Features", "Auth", "Search")], True),
    ("db+features", "SQLite\nAuth, Billing",
     [picked("Database", "SQLite"), picked("Features", "Auth", "Billing")], True),
    ("db+features", "Database: SQLite", "No answer for Features.", True),
    ("db+features", "Features: 1", "No answer for Database.", True),
    ("db+features", "2", "Line 1 (\"2\") names no question: start it with one of Database, Features, e.g. \"Database: …\".", True),
    ("db+features", "Database: 1\nSearch",
     'Line 2 ("Search") names no question: start it with one of Database, Features, e.g. "Database: …".', True),
    ("db+features", "Database: 1\nDatabase: 2\nFeatures: 1",
     "Line 2 answers Database again: give each question one line.", True),
    ("db+features", "Database: 9\nFeatures: 1",
     "Database: there is no option 9 (options are numbered 1 to 3).", True),
    ("db+features", "Database: 9\nFeatures: Nope",
     'Database: there is no option 9 (options are numbered 1 to 3). Features: "Nope" is none of the options (1 Auth, 2 Billing, 3 Search, 4 Admin panel).', True),
    ("db+features", "Colour: red\nDatabase: 1\nFeatures: 1",
     'Line 1 ("Colour: red") names no question: start it with one of Database, Features, e.g. "Database: …".', True),
    ("db+features", "Database: Other: Oracle\nFeatures: Other: SSO",
     [typed("Database", "Oracle"), typed("Features", "SSO")], True),
    ("db+features", "Database: 1\n\n\nFeatures: 2", [picked("Database", "SQLite"), picked("Features", "Billing")], True),
    ("db+features", "1\n2\n3",
     'Line 1 ("1") names no question: start it with one of Database, Features, e.g. "Database: …". '
     'Line 2 ("2") names no question: start it with one of Database, Features, e.g. "Database: …". '
     'Line 3 ("3") names no question: start it with one of Database, Features, e.g. "Database: …".', True),
    # Labels with colons.
    ("time", "10:00", [picked("Time", "10:00")], True),
    ("time", "Time: 14:00", [picked("Time", "14:00")], True),
    ("time", "2", [picked("Time", "14:00")], True),
    # A number is an option number, whatever the labels start with.
    ("time", "14", "Time: there is no option 14 (options are numbered 1 to 2).", False),
    # Prefixes that could be two labels.
    ("mode", "Saf", 'Mode: "Saf" could be "Safe" or "Safer": type more of it, or its number.', True),
    ("mode", "Safe", [picked("Mode", "Safe")], True),
    ("mode", "Safer", [picked("Mode", "Safer")], True),
    ("mode", "f", [picked("Mode", "Fast")], True),
    ("mode", "s", 'Mode: "s" could be "Safe" or "Safer": type more of it, or its number.', True),
    # The extended profile: text questions, no Other where it is not allowed, secrets.
    ("deploy+branch+checks", "Deploy: Staging\nBranch: release/2.0\nChecks: 1, 2",
     [picked("Deploy", "Staging"), typed("Branch", "release/2.0"), picked("Checks", "Lint", "Tests")], True),
    ("deploy+branch+checks", "Deploy: prod\nBranch: main\nChecks: bench",
     [picked("Deploy", "Production"), typed("Branch", "main"), picked("Checks", "Bench")], True),
    ("deploy+branch+checks", "1\nfeature/x\n3",
     [picked("Deploy", "Staging"), typed("Branch", "feature/x"), picked("Checks", "Bench")], True),
    ("deploy+branch+checks", "Deploy: Other: QA\nBranch: main\nChecks: 1",
     "Deploy: typed answers are not taken here; pick one of 1 Staging, 2 Production.", True),
    ("deploy+branch+checks", "Deploy: 1\nChecks: 1",
     "No answer for Branch.", True),
    ("deploy+branch+checks", "Branch: main",
     "No answer for Deploy, Checks.", True),
    ("deploy+branch+checks", "Deploy: 1\nBranch:\nChecks: 1", "Branch: the answer is empty.", True),
    ("deploy+branch+checks", "Deploy: 1\nBranch: Other: main\nChecks: 2",
     [picked("Deploy", "Staging"), typed("Branch", "Other: main"), picked("Checks", "Tests")], True),
    ("token", "hunter2", "Token: a secret is never typed in a reply; answer it on the page.", True),
    ("token", "Token: hunter2", "Token: a secret is never typed in a reply; answer it on the page.", True),
    ("notes", "Ship it on Friday.", [typed("Notes", "Ship it on Friday.")], True),
    ("notes", "Notes: call me first", [typed("Notes", "call me first")], True),
    ("notes", "  two\nlines  ", [typed("Notes", "two\nlines")], False),
    ("notes", "x" * 2000, [typed("Notes", "x" * 2000)], False),
    ("notes", "x" * 2001, "Notes: the answer has 2001 characters; at most 2000 are taken.", False),
    ("db+notes", "Database: 1\nNotes: Keep the data: all of it",
     [picked("Database", "SQLite"), typed("Notes", "Keep the data: all of it")], True),
    ("db+notes", "Notes: later", "No answer for Database.", True),
]

FULL_WIDTH = {c: chr(ord(c) + 0xFEE0) for c in map(chr, range(0x21, 0x7F))}


def upper(s):
    return s.upper()


def lower(s):
    return s.lower()


def full_width(s):
    return "".join(FULL_WIDTH.get(c, "\u3000" if c == " " else c) for c in s)


def spaced(s):
    return "\n".join("  " + line.replace(": ", " :  ") + "  " for line in s.split("\n"))


def crlf(s):
    return s.replace("\n", "\r\n") + "\r\n"


VARIANTS = [("upper", upper), ("lower", lower), ("full width", full_width), ("spaced", spaced), ("crlf", crlf)]


def typed_as(variant, reply, text):
    """A typed answer as the variant types it: the variant applied to the answer's text."""
    if variant is None:
        return text
    name, f = variant
    if name in ("spaced", "crlf"):
        return text.replace(": ", " :  ") if name == "spaced" else text
    return f(text)


def emit(batch, reply, outcome, note):
    profile, questions = BATCHES[batch]
    case = {"note": note, "profile": profile, "batch": {"questions": questions}, "reply": reply}
    if isinstance(outcome, str):
        case["unclear"] = outcome
    else:
        case["answers"] = outcome
    print(json.dumps(case, ensure_ascii=False))


for batch, reply, outcome, vary in CASES:
    emit(batch, reply, outcome, batch)
    if not vary or isinstance(outcome, str):
        continue
    for variant in VARIANTS:
        name, f = variant
        answers = [dict(a, custom_answer=typed_as(variant, reply, a["custom_answer"])) if "custom_answer" in a else a
                   for a in outcome]
        emit(batch, f(reply), answers, f"{batch}, {name}")
