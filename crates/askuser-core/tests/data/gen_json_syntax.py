"""Usage: python3 gen_json_syntax.py > cases.jsonl

Argument texts that probe the JSON reader against the reference's parser: special numbers and
literals in every kind of slot, random character edits of a valid call, white space of every
kind around it, and nesting depths around the reference's limit.
"""
import json
import random

rnd = random.Random(5)
base = '{"questions":[{"header":"H","question":"Q","options":[{"label":"A"},{"label":"B","description":"d"}],"multi_select":false}]}'
specials = ['1e400', '-1e400', '1.', '.5', '01', '-0', '-0.0', '1E2', '1e-400', '18446744073709551616',
            '-9223372036854775809', 'NaN', 'Infinity', 'true', 'null', '"x"', '[]', '{}', '[1,]', '{"a":1,}',
            '"\\ud800"', '"\\udc00"', '"\\u00"', '"\\t"', '"a\\/b"', '"\\x41"', '"\u0001"', '[' * 130 + ']' * 130,
            '[' * 100 + ']' * 100]
n = 0
for s in specials:
    for slot in ['multi_select', 'extra', 'description']:
        if slot == 'multi_select':
            t = base.replace('"multi_select":false', '"multi_select":' + s)
        elif slot == 'extra':
            t = base.replace('"multi_select":false', '"multi_select":false,"zz":' + s)
        else:
            t = base.replace('"description":"d"', '"description":' + s)
        n += 1
        print(json.dumps({"id": f"s{n}", "kind": "request", "args_json": t}))
chars = list('{}[],:"\\ \n\t0123456789.eE+-tfnul/bfrux') + ['\u0000', '\u001f', 'é', '\ufeff', '\u2028']
for i in range(3000):
    t = list(base)
    for _ in range(rnd.randint(1, 3)):
        k = rnd.randrange(3)
        p = rnd.randrange(len(t) + 1)
        if k == 0:
            t.insert(p, rnd.choice(chars))
        elif k == 1 and p < len(t):
            del t[p]
        elif p < len(t):
            t[p] = rnd.choice(chars)
    print(json.dumps({"id": f"m{i}", "kind": "request", "args_json": ''.join(t)}))
for ws in [' ', '\n', '\t', '\r', '\u00a0', '\ufeff', '\u2028', '\x0b', '\x0c']:
    for pos in ['pre', 'post', 'mid']:
        t = ws + base if pos == 'pre' else base + ws if pos == 'post' else base.replace(':[{', ':' + ws + '[{', 1)
        n += 1
        print(json.dumps({"id": f"w{n}", "kind": "request", "args_json": t}))
nested = '{"questions":[{"header":"H","question":"Q","options":[{"label":"A"},{"label":"B"}],"zz":%s}]}'
for d in [120, 127, 128, 129, 150, 170, 190, 198, 199, 200]:
    print(json.dumps({"id": f"d{d}", "kind": "request", "args_json": nested % ('[' * d + ']' * d)}))
for tok in ['NaN', '-NaN', 'Infinity', '-Infinity', '+Infinity', 'nan', 'inf', '+1', '1e400', '-1e400', '1e-400',
            '123456789012345678901234567890']:
    print(json.dumps({"id": "t" + tok, "kind": "request", "args_json": nested % tok}))
