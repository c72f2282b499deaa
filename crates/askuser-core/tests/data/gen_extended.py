"""Usage: python3 gen_extended.py   (writes extended.jsonl and extended.expected.jsonl beside it)

The extended profile's corpus (docs/contract.md §10). Every case states its expected verdict here, by hand,
from the rules of §10 as docs/wire.md lists them: nothing is computed by running askuser. Loops
only repeat one stated expectation over several inputs of the same kind.

Expected lines:
  request accepted   {"id","ok":true}                  (+ "ids": the question ids, where stated)
  request rejected   {"id","ok":false,"loc":[...],"type":"..."}   (the first problem)
  response accepted  {"id","ok":true,"model_text":"..."}
  response rejected  {"id","ok":false,"stage":"request"|"response"}
"""
import json, os

HERE = os.path.dirname(os.path.abspath(__file__))
cases, expected = [], []


def add(rule, case, verdict):
    cid = f"ext/{len(cases) + 1:03d}-{rule}"
    cases.append({"id": cid, **case, "tags": ["extended", rule]})
    expected.append({"id": cid, **verdict})


def ok(rule, args, ids=None):
    verdict = {"ok": True}
    if ids is not None:
        verdict["ids"] = ids
    add(rule, {"kind": "request", "args": args}, verdict)


def ok_json(rule, text, ids=None):
    verdict = {"ok": True}
    if ids is not None:
        verdict["ids"] = ids
    add(rule, {"kind": "request", "args_json": text}, verdict)


def bad(rule, args, loc, code):
    add(rule, {"kind": "request", "args": args}, {"ok": False, "loc": loc, "type": code})


def bad_json(rule, text, loc, code):
    add(rule, {"kind": "request", "args_json": text}, {"ok": False, "loc": loc, "type": code})


def answered(rule, args, response, result):
    add(rule, {"kind": "response", "args": args, "response": response},
        {"ok": True, "model_text": json.dumps(result, ensure_ascii=False, separators=(",", ":"))})


def misfit(rule, args, response, stage="response"):
    add(rule, {"kind": "response", "args": args, "response": response}, {"ok": False, "stage": stage})


def opts(*labels, defaults=()):
    out = []
    for i, label in enumerate(labels):
        o = {"label": label}
        if i in defaults:
            o["default"] = True
        out.append(o)
    return out


def choice(header="Deploy", **extra):
    q = {"header": header, "question": "Where should it go?", "options": opts("Staging", "Production")}
    q.update(extra)
    return q


def text(header="Branch", **extra):
    q = {"kind": "text", "header": header, "question": "Which branch name?"}
    q.update(extra)
    return q


def secret(**extra):
    q = {"kind": "secret", "header": "Token", "question": "Your deploy token?",
         "secret_name": "DEPLOY_TOKEN", "purpose": "To push the release."}
    q.update(extra)
    return q


def call(*questions, **extra):
    return {"questions": list(questions), **extra}


def q(i, *rest):
    return ["questions", i, *rest]


def result(status, by, answers):
    return {"status": status, "answered_by": by, "answers": answers}


def ans(id_, header, selected=(), other=None, secret_ref=None):
    a = {"id": id_, "header": header, "selected": list(selected), "other_text": other}
    if secret_ref is not None:
        a["secret_ref"] = secret_ref
    return a


# --- kind: "choice" (default), "text" or "secret", trimmed; anything else is invalid_kind --------
ok("kind", call(choice()), ["q1"])
ok("kind", call(choice(kind="choice")), ["q1"])
ok("kind", call(choice(kind=None)), ["q1"])
ok("kind", call(choice(kind=" choice ")), ["q1"])
ok("kind", call(text()), ["q1"])
ok("kind", call(text(kind="text\n")), ["q1"])
ok("kind", call(secret()), ["q1"])
ok("kind", call(secret(kind="\u00a0secret")), ["q1"])
for k in ["Text", "CHOICE", "multiple_choice", "password", "", "   ", "text question", "secrets", "txt"]:
    bad("kind", call(choice(kind=k)), q(0, "kind"), "invalid_kind")
for k in [1, True, [], {}, ["text"]]:
    bad("kind", call(choice(kind=k)), q(0, "kind"), "wrong_type")
bad("kind", call(choice(), text(kind="free")), q(1, "kind"), "invalid_kind")

# --- id: 1-64 of [A-Za-z0-9_.-] after trimming; null or absent = generated -------------------
for i, good in enumerate(["a", "A", "0", "deploy", "deploy_target", "x.y-z", "Q1", "q-1.2_3", "-", ".", "_",
                          "a" * 64, "2026-11-30", "ABC.def-ghi_JKL"]):
    ok("id", call(text(id=good)), [good])
ok("id", call(text(id="  spaced  ")), ["spaced"])
ok("id", call(text(id="tab\t")), ["tab"])
ok("id", call(text(id=None)), ["q1"])
for badid in ["a b", "a/b", "é", "a:b", "a#", "deploy!", "日本", "a,b", "a+b", "x@y", "(a)"]:
    bad("id", call(text(id=badid)), q(0, "id"), "pattern_mismatch")
bad("id", call(text(id="")), q(0, "id"), "string_too_short")
bad("id", call(text(id="  ")), q(0, "id"), "string_too_short")
bad("id", call(text(id="a" * 65)), q(0, "id"), "string_too_long")
bad("id", call(text(id="a\u200bb")), q(0, "id"), "forbidden_character")
bad("id", call(text(id="a\nb")), q(0, "id"), "forbidden_character")
for wrong in [1, 1.5, True, [], {"id": "x"}]:
    bad("id", call(text(id=wrong)), q(0, "id"), "wrong_type")

# --- ids unique by exact match; generated q1, q2, ... by position, skipping taken ids -----------
bad("id-unique", call(text(id="a"), text(header="Other", id="a")), q(1, "id"), "duplicate_id")
bad("id-unique", call(text(id="x", header="A"), text(id="y", header="B"), text(id="x", header="C")),
    q(2, "id"), "duplicate_id")
bad("id-unique", call(text(id=" a ", header="A"), text(id="a", header="B")), q(1, "id"), "duplicate_id")
ok("id-unique", call(text(id="a", header="A"), text(id="A", header="B")), ["a", "A"])
ok("id-unique", call(text(id="q-1", header="A"), text(id="q_1", header="B")), ["q-1", "q_1"])
ok("id-generated", call(choice("A"), choice("B"), choice("C")), ["q1", "q2", "q3"])
ok("id-generated", call(choice("A"), text(header="B", id="q1"), choice("C")), ["q2", "q1", "q3"])
ok("id-generated", call(choice("A", id="q2"), choice("B"), choice("C")), ["q2", "q1", "q3"])
ok("id-generated", call(choice("A", id="q1"), choice("B", id="q2"), choice("C")), ["q1", "q2", "q3"])
ok("id-generated", call(choice("A"), choice("B", id="q1"), choice("C", id="q2"), choice("D")),
   ["q3", "q1", "q2", "q4"])
ok("id-generated", call(*[choice(f"H{i}") for i in range(10)]), [f"q{i}" for i in range(1, 11)])
ok("id-generated", call(*[choice(f"H{i}", id=f"q{i + 1}") for i in range(9)], choice("Last")),
   [f"q{i}" for i in range(1, 10)] + ["q10"])
ok("id-generated", call(*[choice(f"H{i}", id=f"q{10 - i}") for i in range(9)], choice("Last")),
   [f"q{10 - i}" for i in range(9)] + ["q1"])
ok("id-generated", call(choice("A", id="Q1"), choice("B")), ["Q1", "q1"])

# --- every rule of §2 holds for every string: header, question, label, description -----------
ok("strings", call(choice(header=" Deploy target \t")), ["q1"])
bad("strings", call(choice(header="")), q(0, "header"), "string_too_short")
bad("strings", call(choice(header="h" * 26)), q(0, "header"), "string_too_long")
ok("strings", call(choice(header="h" * 25)), ["q1"])
bad("strings", call(choice(header="a\nb")), q(0, "header"), "forbidden_character")
bad("strings", call(text(header="a\u202eb")), q(0, "header"), "forbidden_character")
bad("strings", call(text(question="")), q(0, "question"), "string_too_short")
bad("strings", call(text(question="x" * 501)), q(0, "question"), "string_too_long")
ok("strings", call(text(question="Line one\nline two")), ["q1"])
bad("strings", call(text(question="tab\tinside")), q(0, "question"), "forbidden_character")
bad("strings", call(secret(question="\u200b")), q(0, "question"), "forbidden_character")
bad("strings", call({"kind": "text", "question": "Q?"}), q(0, "header"), "missing")
bad("strings", call({"kind": "text", "header": "H"}), q(0, "question"), "missing")
bad("strings", call(text(header=5)), q(0, "header"), "wrong_type")
bad("strings", call(choice(options=[{"label": "A"}, {"label": "x" * 51}])), q(0, "options", 1, "label"),
    "string_too_long")
bad("strings", call(choice(options=[{"label": "A", "description": "d" * 201}, {"label": "B"}])),
    q(0, "options", 0, "description"), "string_too_long")
ok("strings", call(choice(options=[{"label": "A", "description": None}, {"label": "B", "description": " "}])),
   ["q1"])

# --- headers unique by the fold; labels unique by the fold ------------------------------------
bad("unique", call(choice("Straße"), text(header="STRASSE")), ["questions"], "duplicate_header")
bad("unique", call(text(header="Token"), text(header="token", id="t2")), ["questions"], "duplicate_header")
ok("unique", call(text(header="a b"), text(header="a  b")), ["q1", "q2"])
bad("unique", call(choice(options=opts("Go", "GO"))), q(0), "duplicate_label")
bad("unique", call(choice(options=opts("ﬁle", "FILE"))), q(0), "duplicate_label")
ok("unique", call(choice(options=opts("İ", "i"))), ["q1"])

# --- options: 2-6 on a choice question; absent or [] on a text or secret question -------------
bad("options", call(choice(options=opts("Only"))), q(0, "options"), "too_short")
bad("options", call(choice(options=[])), q(0, "options"), "too_short")
bad("options", call(choice(options=opts(*"ABCDEFG"))), q(0, "options"), "too_long")
ok("options", call(choice(options=opts(*"ABCDEF"))), ["q1"])
bad("options", call({"header": "H", "question": "Q"}), q(0, "options"), "missing")
bad("options", call({"kind": "choice", "header": "H", "question": "Q"}), q(0, "options"), "missing")
ok("options", call(text(options=[])), ["q1"])
ok("options", call(secret(options=[])), ["q1"])
bad("options", call(text(options=opts("A", "B"))), q(0, "options"), "kind_mismatch")
bad("options", call(text(options=opts("A"))), q(0, "options"), "kind_mismatch")
bad("options", call(secret(options=opts("A", "B"))), q(0, "options"), "kind_mismatch")
bad("options", call(text(options=None)), q(0, "options"), "wrong_type")
bad("options", call(text(options="none")), q(0, "options"), "wrong_type")
bad("options", call(choice(options={"label": "A"})), q(0, "options"), "wrong_type")
bad("options", call(choice(options=["A", "B"])), q(0, "options", 0), "wrong_type")

# --- multi_select: choice only (false allowed elsewhere); the lax coercion of §2.4 ------------
for value in [True, False, 1, 0, "yes", "no", "ON", "off", "t", "F", "1", "0", "Y", "n"]:
    ok("multi_select", call(choice(multi_select=value)), ["q1"])
for value in [2, -1, 1.5, " true", "", "1.0", "maybe"]:
    bad("multi_select", call(choice(multi_select=value)), q(0, "multi_select"), "bool_parsing")
for value in [None, [], {}]:
    bad("multi_select", call(choice(multi_select=value)), q(0, "multi_select"), "wrong_type")
for value in [False, 0, "no", "false"]:
    ok("multi_select", call(text(multi_select=value)), ["q1"])
    ok("multi_select", call(secret(multi_select=value)), ["q1"])
for value in [True, 1, "yes"]:
    bad("multi_select", call(text(multi_select=value)), q(0, "multi_select"), "kind_mismatch")
    bad("multi_select", call(secret(multi_select=value)), q(0, "multi_select"), "kind_mismatch")

# --- allow_other: a strict boolean or null (default true); false only on a choice question ----
for value in [True, False, None]:
    ok("allow_other", call(choice(allow_other=value)), ["q1"])
for value in [True, None]:
    ok("allow_other", call(text(allow_other=value)), ["q1"])
    ok("allow_other", call(secret(allow_other=value)), ["q1"])
bad("allow_other", call(text(allow_other=False)), q(0, "allow_other"), "kind_mismatch")
bad("allow_other", call(secret(allow_other=False)), q(0, "allow_other"), "kind_mismatch")
for value in ["true", "no", 1, 0, [], {}]:
    bad("allow_other", call(choice(allow_other=value)), q(0, "allow_other"), "wrong_type")
bad("allow_other", call({"header": "H", "question": "Q", "options": opts("A", "B"), "allowOther": False}),
    q(0, "allowOther"), "extra_forbidden")

# --- secret_name: required on a secret question, [A-Za-z_][A-Za-z0-9_]{0,63}; secret only -----
for name in ["A", "_", "_A1", "DEPLOY_TOKEN", "github_token", "x" * 64, "T0K3N", "a_b_c"]:
    ok("secret_name", call(secret(secret_name=name)), ["q1"])
ok("secret_name", call(secret(secret_name="  TOKEN \n")), ["q1"])
for name in ["1TOKEN", "DEPLOY-TOKEN", "deploy.token", "DEPLOY TOKEN", "TOKEN$", "tøken", "session:X", "A=B"]:
    bad("secret_name", call(secret(secret_name=name)), q(0, "secret_name"), "pattern_mismatch")
bad("secret_name", call(secret(secret_name="")), q(0, "secret_name"), "string_too_short")
bad("secret_name", call(secret(secret_name="x" * 65)), q(0, "secret_name"), "string_too_long")
bad("secret_name", call(secret(secret_name="A\u0000")), q(0, "secret_name"), "forbidden_character")
bad("secret_name", call(secret(secret_name=None)), q(0, "secret_name"), "missing")
bad("secret_name", call({"kind": "secret", "header": "T", "question": "Q", "purpose": "P"}),
    q(0, "secret_name"), "missing")
for wrong in [7, True, ["TOKEN"]]:
    bad("secret_name", call(secret(secret_name=wrong)), q(0, "secret_name"), "wrong_type")
bad("secret_name", call(choice(secret_name="TOKEN")), q(0, "secret_name"), "kind_mismatch")
bad("secret_name", call(text(secret_name="TOKEN")), q(0, "secret_name"), "kind_mismatch")
ok("secret_name", call(text(secret_name=None)), ["q1"])
ok("secret_name", call(choice(secret_name=None, purpose=None)), ["q1"])

# --- purpose: required on a secret question, 1-200, may span lines; secret only ---------------
for purpose in ["To deploy.", "p" * 200, "To push the release\nto the registry.", "  padded  ", "中文の目的"]:
    ok("purpose", call(secret(purpose=purpose)), ["q1"])
bad("purpose", call(secret(purpose="p" * 201)), q(0, "purpose"), "string_too_long")
bad("purpose", call(secret(purpose="")), q(0, "purpose"), "string_too_short")
bad("purpose", call(secret(purpose=" \n ")), q(0, "purpose"), "string_too_short")
bad("purpose", call(secret(purpose="a\tb")), q(0, "purpose"), "forbidden_character")
bad("purpose", call(secret(purpose="a\u2028b")), q(0, "purpose"), "forbidden_character")
bad("purpose", call(secret(purpose=None)), q(0, "purpose"), "missing")
bad("purpose", call({"kind": "secret", "header": "T", "question": "Q", "secret_name": "T"}), q(0, "purpose"),
    "missing")
bad("purpose", call(secret(purpose=12)), q(0, "purpose"), "wrong_type")
bad("purpose", call(choice(purpose="Why")), q(0, "purpose"), "kind_mismatch")
bad("purpose", call(text(purpose="Why")), q(0, "purpose"), "kind_mismatch")

# --- a secret question is alone in its call -----------------------------------------------------
bad("secret-alone", call(secret(), choice()), q(0, "kind"), "secret_not_alone")
bad("secret-alone", call(choice(), secret()), q(1, "kind"), "secret_not_alone")
bad("secret-alone", call(text(), choice(), secret()), q(2, "kind"), "secret_not_alone")
bad("secret-alone", call(secret(), secret(header="Other", secret_name="OTHER")), q(0, "kind"), "secret_not_alone")
ok("secret-alone", call(secret()), ["q1"])
ok("secret-alone", call(secret(id="token")), ["token"])

# --- default: a strict boolean or null; at most one on a single-select question -----------------
ok("default", call(choice(options=opts("A", "B", defaults=[0]))), ["q1"])
ok("default", call(choice(options=opts("A", "B", defaults=[1]))), ["q1"])
ok("default", call(choice(options=[{"label": "A", "default": False}, {"label": "B", "default": None}])), ["q1"])
ok("default", call(choice(multi_select=True, options=opts("A", "B", "C", defaults=[0, 2]))), ["q1"])
ok("default", call(choice(multi_select=True, options=opts("A", "B", "C", defaults=[0, 1, 2]))), ["q1"])
ok("default", call(choice(multi_select="yes", options=opts("A", "B", defaults=[0, 1]))), ["q1"])
bad("default", call(choice(options=opts("A", "B", defaults=[0, 1]))), q(0, "options", 1, "default"),
    "too_many_defaults")
bad("default", call(choice(options=opts("A", "B", "C", "D", defaults=[1, 3]))), q(0, "options", 3, "default"),
    "too_many_defaults")
bad("default", call(choice(multi_select=False, options=opts("A", "B", "C", defaults=[0, 1, 2]))),
    q(0, "options", 1, "default"), "too_many_defaults")
bad("default", call(choice(options=opts("Go", "go", defaults=[0, 1]))), q(0), "duplicate_label")
for value in ["true", 1, 0, "yes", [], {}]:
    bad("default", call(choice(options=[{"label": "A", "default": value}, {"label": "B"}])),
        q(0, "options", 0, "default"), "wrong_type")
bad("default", call(choice(options=[{"label": "A", "isDefault": True}, {"label": "B"}])),
    q(0, "options", 0, "isDefault"), "extra_forbidden")

# --- timeout_seconds: a whole number in 1 ..= the host's maximum (300 here), or null -----------
for value in [1, 2, 30, 299, 300]:
    ok("timeout_seconds", call(choice(), timeout_seconds=value), ["q1"])
ok("timeout_seconds", call(choice(), timeout_seconds=None), ["q1"])
for value in [0, -1, 301, 3600, 10 ** 12, -(10 ** 12)]:
    bad("timeout_seconds", call(choice(), timeout_seconds=value), ["timeout_seconds"], "out_of_range")
for value in [1.5, 30.5, -0.5, 0.001]:
    bad("timeout_seconds", call(choice(), timeout_seconds=value), ["timeout_seconds"], "int_type")
for lit in ["30.0", "1e2", "3E1", "NaN", "Infinity"]:
    bad_json("timeout_seconds", '{"questions":[{"kind":"text","header":"H","question":"Q"}],"timeout_seconds":' +
             lit + "}", ["timeout_seconds"], "int_type")
bad_json("timeout_seconds", '{"questions":[{"kind":"text","header":"H","question":"Q"}],"timeout_seconds":'
         '100000000000000000000000}', ["timeout_seconds"], "out_of_range")
for value in ["30", True, [30], {"s": 30}]:
    bad("timeout_seconds", call(choice(), timeout_seconds=value), ["timeout_seconds"], "wrong_type")
bad("timeout_seconds", call(choice(header=""), timeout_seconds=0), q(0, "header"), "string_too_short")
bad("timeout_seconds", call(choice(), timeout_seconds=0, extra=1), ["timeout_seconds"], "out_of_range")

# --- unknown keys are rejected at every level, after the known fields ---------------------------
bad("unknown", call(choice(), timeout=30), ["timeout"], "extra_forbidden")
bad("unknown", call(choice(), timeoutSeconds=30), ["timeoutSeconds"], "extra_forbidden")
bad("unknown", call(text(value="x")), q(0, "value"), "extra_forbidden")
bad("unknown", call(secret(secret_value="x")), q(0, "secret_value"), "extra_forbidden")
bad("unknown", call(choice(multiSelect=True)), q(0, "multiSelect"), "extra_forbidden")
bad("unknown", call(text(type="text")), q(0, "type"), "extra_forbidden")
bad("unknown", call(text(kind="nope", zzz=1)), q(0, "kind"), "invalid_kind")
bad("unknown", call(choice(options=[{"label": "A", "recommended": True}, {"label": "B"}])),
    q(0, "options", 0, "recommended"), "extra_forbidden")

# --- the first problem is the first field in order: kind, id, header, question, options,
#     multi_select, allow_other, secret_name, purpose; then the call's timeout_seconds ---------
bad("order", call({"kind": 1, "id": "a b", "header": "", "question": ""}), q(0, "kind"), "wrong_type")
bad("order", call({"kind": "text", "id": "a b", "header": "", "question": ""}), q(0, "id"), "pattern_mismatch")
bad("order", call({"kind": "text", "header": "", "question": "", "multi_select": True}), q(0, "header"),
    "string_too_short")
bad("order", call({"kind": "text", "header": "H", "question": "Q", "options": opts("A"), "multi_select": True}),
    q(0, "options"), "kind_mismatch")
bad("order", call({"kind": "text", "header": "H", "question": "Q", "multi_select": True, "allow_other": False}),
    q(0, "multi_select"), "kind_mismatch")
bad("order", call({"kind": "text", "header": "H", "question": "Q", "allow_other": False, "secret_name": "X"}),
    q(0, "allow_other"), "kind_mismatch")
bad("order", call({"kind": "secret", "header": "H", "question": "Q", "secret_name": "1", "purpose": ""}),
    q(0, "secret_name"), "pattern_mismatch")
bad("order", call(text(header=""), timeout_seconds=0), q(0, "header"), "string_too_short")
bad("order", call(text(), timeout_seconds=0, zzz=1), ["timeout_seconds"], "out_of_range")
bad("order", {"questions": []}, ["questions"], "too_short")
bad("order", {"questions": [text(header=f"H{i}") for i in range(11)]}, ["questions"], "too_long")
bad("order", {}, ["questions"], "missing")
bad("order", {"questions": text()}, ["questions"], "wrong_type")
bad_json("order", "[]", [], "wrong_type")
bad_json("order", '{"questions":[{"kind":"text","header":"H","question":"Q",}]}', [], "json_invalid")

# --- responses: a choice question takes labels, or its own words when allow_other ---------------
A1 = call(choice(options=opts("Staging", "Production", defaults=[0])))
answered("answer-choice", A1, {"answers": [{"header": "Deploy", "selected": ["Production"]}]},
         result("answered", "user", [ans("q1", "Deploy", ["Production"])]))
answered("answer-choice", A1, {"answers": [{"header": "Deploy", "custom_answer": "Both, staging first"}]},
         result("answered", "user", [ans("q1", "Deploy", [], "Both, staging first")]))
answered("answer-choice", A1, {"answers": [{"header": "Deploy", "custom_answer": "Zwei\nZeilen 中文"}]},
         result("answered", "user", [ans("q1", "Deploy", [], "Zwei\nZeilen 中文")]))
answered("answer-choice", A1, {"answers": [{"header": "Deploy", "id": "q1", "selected": ["Staging"]}]},
         result("answered", "user", [ans("q1", "Deploy", ["Staging"])]))
A2 = call(choice(allow_other=False, id="where"))
answered("answer-choice", A2, {"answers": [{"header": "Deploy", "selected": ["Staging"]}]},
         result("answered", "user", [ans("where", "Deploy", ["Staging"])]))
misfit("answer-choice", A2, {"answers": [{"header": "Deploy", "custom_answer": "Elsewhere"}]})
misfit("answer-choice", A1, {"answers": [{"header": "Deploy", "selected": ["Nowhere"]}]})
misfit("answer-choice", A1, {"answers": [{"header": "Deploy", "selected": []}]})
misfit("answer-choice", A1, {"answers": [{"header": "Deploy", "selected": ["Staging", "Production"]}]})
misfit("answer-choice", A1, {"answers": [{"header": "Deploy", "selected": ["Staging"], "custom_answer": "x"}]})
misfit("answer-choice", A1, {"answers": [{"header": "Deploy", "custom_answer": "  "}]})
misfit("answer-choice", A1, {"answers": [{"header": "Deploy", "custom_answer": "a\u200bb"}]})
misfit("answer-choice", A1, {"answers": [{"header": "Deploy", "selected": ["Staging"],
                                          "secret_ref": "session:DEPLOY_TOKEN"}]})
misfit("answer-choice", A1, {"answers": [{"header": "Deploy", "id": "q2", "selected": ["Staging"]}]})
misfit("answer-choice", A1, {"answers": [{"header": "deploy", "selected": ["Staging"]}]})
misfit("answer-choice", A1, {"answers": []})
misfit("answer-choice", A1, {"answers": [{"header": "Deploy", "selected": ["Staging"]},
                                          {"header": "Deploy", "selected": ["Staging"]}]})
A3 = call(choice(multi_select=True, options=opts("Lint", "Tests", "Bench", defaults=[0, 1])))
answered("answer-choice", A3, {"answers": [{"header": "Deploy", "selected": ["Bench", "Lint"]}]},
         result("answered", "user", [ans("q1", "Deploy", ["Bench", "Lint"])]))
misfit("answer-choice", A3, {"answers": [{"header": "Deploy", "selected": ["Lint", "Lint"]}]})

# --- a text question takes its own words (custom_answer), non-blank, and nothing selected ------
T1 = call(text(id="branch"))
answered("answer-text", T1, {"answers": [{"header": "Branch", "custom_answer": "feature/open-question"}]},
         result("answered", "user", [ans("branch", "Branch", [], "feature/open-question")]))
answered("answer-text", T1, {"answers": [{"header": "Branch", "id": "branch", "custom_answer": " main "}]},
         result("answered", "user", [ans("branch", "Branch", [], " main ")]))
answered("answer-text", T1, {"answers": [{"header": "Branch", "custom_answer": "x" * 3000}]},
         result("answered", "user", [ans("branch", "Branch", [], "x" * 3000)]))
answered("answer-text", T1, {"answers": [{"header": "Branch", "custom_answer": "a\nb \"quoted\" \\ é"}]},
         result("answered", "user", [ans("branch", "Branch", [], "a\nb \"quoted\" \\ é")]))
misfit("answer-text", T1, {"answers": [{"header": "Branch", "selected": ["main"]}]})
misfit("answer-text", T1, {"answers": [{"header": "Branch"}]})
misfit("answer-text", T1, {"answers": [{"header": "Branch", "selected": ["main"], "custom_answer": "main"}]})
misfit("answer-text", T1, {"answers": [{"header": "Branch", "custom_answer": ""}]})
misfit("answer-text", T1, {"answers": [{"header": "Branch", "custom_answer": "\u3000\n"}]})
misfit("answer-text", T1, {"answers": [{"header": "Branch", "custom_answer": "\x1f"}]})
misfit("answer-text", T1, {"answers": [{"header": "Branch", "custom_answer": "a\tb"}]})
misfit("answer-text", T1, {"answers": [{"header": "Branch", "custom_answer": "main",
                                        "secret_ref": "session:BRANCH"}]})
misfit("answer-text", T1, {"answers": [{"header": "Branch", "id": "q1", "custom_answer": "main"}]})

# --- a secret question takes exactly secret_ref = session:NAME, and nothing else ----------------
S1 = call(secret())
answered("answer-secret", S1, {"answers": [{"header": "Token", "secret_ref": "session:DEPLOY_TOKEN"}]},
         result("answered", "user", [ans("q1", "Token", [], None, "session:DEPLOY_TOKEN")]))
answered("answer-secret", S1, {"answers": [{"header": "Token", "id": "q1", "secret_ref": "session:DEPLOY_TOKEN"}]},
         result("answered", "user", [ans("q1", "Token", [], None, "session:DEPLOY_TOKEN")]))
answered("answer-secret", call(secret(id="gh", secret_name=" GH_TOKEN ")),
         {"answers": [{"header": "Token", "secret_ref": "session:GH_TOKEN"}]},
         result("answered", "user", [ans("gh", "Token", [], None, "session:GH_TOKEN")]))
for wrong in ["session:OTHER", "DEPLOY_TOKEN", "session:deploy_token", "session: DEPLOY_TOKEN",
              "env:DEPLOY_TOKEN", "session:DEPLOY_TOKEN ", "hunter2", ""]:
    misfit("answer-secret", S1, {"answers": [{"header": "Token", "secret_ref": wrong}]})
misfit("answer-secret", S1, {"answers": [{"header": "Token", "custom_answer": "hunter2"}]})
misfit("answer-secret", S1, {"answers": [{"header": "Token", "selected": ["hunter2"]}]})
misfit("answer-secret", S1, {"answers": [{"header": "Token", "secret_ref": "session:DEPLOY_TOKEN",
                                          "custom_answer": "hunter2"}]})
misfit("answer-secret", S1, {"answers": [{"header": "Token"}]})
misfit("answer-secret", S1, {"answers": [{"header": "Token", "id": "token", "secret_ref": "session:DEPLOY_TOKEN"}]})

# --- mixed batches: answers in the order given, each with its question's id ----------------------
M1 = call(choice(), text(id="branch"), choice("Checks", multi_select=True, options=opts("Lint", "Tests")))
answered("answer-order", M1, {"answers": [
    {"header": "Checks", "selected": ["Tests"]},
    {"header": "Deploy", "selected": ["Staging"]},
    {"header": "Branch", "custom_answer": "main"}]},
    result("answered", "user", [ans("q2", "Checks", ["Tests"]), ans("q1", "Deploy", ["Staging"]),
                                ans("branch", "Branch", [], "main")]))
answered("answer-order", M1, {"answers": [
    {"header": "Deploy", "custom_answer": "Canary"},
    {"header": "Branch", "custom_answer": "main"},
    {"header": "Checks", "selected": ["Lint", "Tests"]}]},
    result("answered", "user", [ans("q1", "Deploy", [], "Canary"), ans("branch", "Branch", [], "main"),
                                ans("q2", "Checks", ["Lint", "Tests"])]))
misfit("answer-order", M1, {"answers": [{"header": "Deploy", "selected": ["Staging"]},
                                        {"header": "Branch", "custom_answer": "main"}]})
misfit("answer-order", M1, {"answers": [{"header": "Deploy", "selected": ["Staging"]},
                                        {"header": "Branch", "custom_answer": "main"},
                                        {"header": "Checks", "selected": ["Lint"]},
                                        {"header": "Extra", "selected": ["Lint"]}]})

# --- the outcome as data: declined, timed out, answered by defaults ------------------------------
for args in [A1, T1, S1, M1]:
    answered("outcome", args, {"cancelled": True}, result("declined", "user", []))
    answered("outcome", args, {"timed_out": True}, result("timed_out", "timeout", []))
    answered("outcome", args, {"cancelled": True, "answered_by": "unattended"}, result("declined", "unattended", []))
    answered("outcome", args, {"cancelled": True, "answered_by": "timeout"}, result("timed_out", "timeout", []))
    misfit("outcome", args, {"cancelled": True, "answers": [{"header": "Deploy", "selected": ["Staging"]}]})
answered("outcome", A1, {"answers": [{"header": "Deploy", "selected": ["Staging"]}], "answered_by": "unattended"},
         result("answered", "unattended", [ans("q1", "Deploy", ["Staging"])]))
answered("outcome", A1, {"answers": [{"header": "Deploy", "selected": ["Staging"]}], "answered_by": "timeout"},
         result("timed_out", "timeout", [ans("q1", "Deploy", ["Staging"])]))
answered("outcome", A3, {"answers": [{"header": "Deploy", "selected": ["Lint", "Tests"]}],
                         "answered_by": "unattended"},
         result("answered", "unattended", [ans("q1", "Deploy", ["Lint", "Tests"])]))

# --- a response to an invalid call is rejected at the request stage ------------------------------
misfit("answer-stage", call(secret(), choice()), {"answers": []}, stage="request")
misfit("answer-stage", call(text(options=opts("A", "B"))), {"cancelled": True}, stage="request")
misfit("answer-stage", call(choice(), timeout_seconds=0), {"timed_out": True}, stage="request")

with open(os.path.join(HERE, "extended.jsonl"), "w", encoding="utf-8") as f:
    for c in cases:
        f.write(json.dumps(c, ensure_ascii=False) + "\n")
with open(os.path.join(HERE, "extended.expected.jsonl"), "w", encoding="utf-8") as f:
    for e in expected:
        f.write(json.dumps(e, ensure_ascii=False) + "\n")
rules = sorted({c["tags"][1] for c in cases})
print(f"{len(cases)} cases, {sum(e['ok'] for e in expected)} accepted, over {len(rules)} rules: {', '.join(rules)}")
