"""Usage: python3 gen_differential.py SEED COUNT [mild]

Random differential cases for ask_user_question: mutations of valid calls near every rule."""
import json, random, sys
rnd = random.Random(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
N = int(sys.argv[2]) if len(sys.argv) > 2 else 5000

POOL = (list("abcXYZ019 -_.,!?()") + ['ß','ẞ','İ','ı','ς','σ','Σ','ﬁ','Ａ','ａ','①','²','K','\u212a','é','e\u0301','\u0301',
   '\u00a0','\u1680','\u2000','\u2009','\u202f','\u205f','\u3000','\t','\n','\r','\x0b','\x0c','\x1c','\x1d','\x1e','\x1f','\x85',
   '\u2028','\u2029','\x00','\x1b','\x7f','\x9b','\u200b','\u200c','\u200d','\u200e','\u202e','\u2066','\ufeff','\u00ad','\u061c',
   '\ue000','\U000f0000','\ufffe','\ufdd0','\U0010ffff','\u0378','\U0001f600','\u2764','\ufe0f','\U0001f3fb','\u3164','\u2800',
   'א','ب','中','ｶ','\u1100','\u1161','\uac00','\u0390','\u03b0','\u0399\u0308\u0301','Ω','\u2126','Å','\u212b','ǅ','ǆ','Ǆ',
   '\U0001d400','\u2160','ⅰ','\u0345','ΐ','\U000e0041','\u180e','\u0000'])

import unicodedata
SAFE = [c for c in POOL if all(unicodedata.category(ch) not in ('Cc','Cf','Cs','Co','Cn','Zl','Zp') for ch in c)]
MILD = len(sys.argv) > 3 and sys.argv[3] == 'mild'

def rstr(lo, hi):
    n = rnd.randint(lo, hi)
    pool = SAFE if MILD and rnd.random() < 0.97 else POOL
    return ''.join(rnd.choice(pool) for _ in range(n))

def near(limit):
    r = rnd.random()
    if r < 0.15: return 'x' * rnd.choice([limit-1, limit, limit+1])
    if r < 0.25: return ' ' * rnd.randint(0,2) + '\u00e9' * rnd.choice([limit, limit+1]) + ' ' * rnd.randint(0, 2)
    if r < 0.3: return rnd.choice(['', ' ', '\t\n', '\u3000'])
    if r < 0.75: return rnd.choice(['Approach', 'Scope', 'Target', 'Yes', 'No', 'api.py']) + (rnd.choice(POOL) if rnd.random() < 0.4 else '')
    return rstr(1, min(limit + 2, 12))

def fold_twin(s):
    table = {'a':'A','A':'a','s':'S','ss':'ß','k':'\u212a','e':'E','o':'O','p':'P','i':'I','t':'T','1':'①','2':'²',' ':'\u3000','x':'X'}
    out = ''.join(table.get(c, c) if rnd.random() < 0.6 else c for c in s)
    return out if rnd.random() < 0.8 else s.upper()

def option():
    o = {'label': near(50)}
    r = rnd.random()
    if r < 0.4: o['description'] = near(200) if rnd.random() < 0.8 else rstr(0, 6)
    elif r < 0.5: o['description'] = None
    return o

def question(i):
    n = rnd.choices([0, 1, 2, 3, 4, 6, 7], [1, 2, 10, 8, 6, 3, 1])[0]
    opts = [option() for _ in range(n)]
    if n >= 2 and rnd.random() < 0.2:
        opts[-1]['label'] = fold_twin(opts[0]['label'])
    q = {'header': near(25) if rnd.random() < 0.6 else f'Topic {i}', 'question': near(500) if rnd.random() < 0.5 else 'Which one?\nPick.', 'options': opts}
    r = rnd.random()
    if r < 0.5:
        q['multi_select'] = rnd.choice([True, False, 0, 1, 2, -1, 0.0, 1.0, 1.5, 'yes', 'No', 'ON', 'off', 't', 'F', 'Y', 'n', '1', '0', ' true', '', '1.0', None, [], {}, 'maybe'])
    return q

def mutate(obj):
    r = rnd.random() * (4 if MILD else 1)
    qs = obj['questions']
    if r < 0.05 and qs: qs[0]['extra'] = 1
    elif r < 0.08 and qs and qs[0]['options']: qs[0]['options'][0]['multiSelect'] = True
    elif r < 0.11: obj['foo'] = 'bar'
    elif r < 0.14 and qs: qs[0][rnd.choice(['header', 'question', 'options'])] = rnd.choice([1, None, True, [], {}, 'str', 2.5])
    elif r < 0.16 and qs: del qs[0][rnd.choice(['header', 'question', 'options'])]
    elif r < 0.18 and qs and qs[0]['options']: qs[0]['options'][0] = rnd.choice(['A', None, 3, []])
    elif r < 0.20 and qs and qs[0]['options']: qs[0]['options'][0]['label'] = rnd.choice([1, None, False, ['x'], {'a': 1}])
    elif r < 0.22 and qs and qs[0]['options']: qs[0]['options'][0]['description'] = rnd.choice([1, False, ['x'], {'a': 1}])
    elif r < 0.24 and len(qs) > 1: qs[1]['header'] = fold_twin(qs[0]['header'])
    elif r < 0.26: obj['questions'] = rnd.choice([None, {}, 'x', 1])
    return obj

def args():
    n = rnd.choices([0, 1, 2, 3, 4, 10, 11], [1, 10, 8, 5, 4, 1, 1])[0]
    return mutate({'questions': [question(i) for i in range(n)]})

def response_for(a):
    answers = []
    for q in (a['questions'] if isinstance(a.get('questions'), list) else []):
        labels = [o['label'].strip() if isinstance(o, dict) and isinstance(o.get('label'), str) else 'x' for o in q.get('options', []) if True] if isinstance(q, dict) and isinstance(q.get('options'), list) else ['x']
        h = q.get('header', 'H') if isinstance(q, dict) else 'H'
        h = h.strip() if isinstance(h, str) else 'H'
        r = rnd.random()
        if r < 0.08: continue
        if r < 0.12: h = h + ' '
        if r < 0.25:
            ans = {'header': h, 'selected': [], 'custom_answer': rnd.choice([rstr(0, 8), ' x ', 'ok\n', '\u3164', 'a\u200bb', ' \x1c '])}
            if rnd.random() < 0.2: ans['selected'] = labels[:1]
        else:
            k = rnd.choice([0, 1, 1, 1, 2, 3])
            sel = [rnd.choice(labels) for _ in range(k)] if labels else []
            if rnd.random() < 0.1: sel.append(rnd.choice(['zzz', labels[0].upper() if labels else 'q']))
            ans = {'header': h, 'selected': sel}
            if rnd.random() < 0.1: ans['custom_answer'] = None
        answers.append(ans)
    rnd.shuffle(answers) if rnd.random() < 0.3 else None
    if rnd.random() < 0.05 and answers: answers.append(dict(answers[0]))
    resp = {'answers': answers}
    r = rnd.random()
    if r < 0.05: resp = {'cancelled': True}
    elif r < 0.08: resp['cancelled'] = True
    elif r < 0.1: resp = {'timed_out': True}
    return resp

for i in range(N):
    a = args()
    if rnd.random() < 0.4:
        line = {'id': f'r{i}', 'kind': 'response', 'args': a, 'response': response_for(a)}
    else:
        line = {'id': f'q{i}', 'kind': 'request', 'args': a}
    if rnd.random() < 0.05:
        line['args_json'] = json.dumps(line.pop('args'), ensure_ascii=rnd.random() < 0.5, indent=rnd.choice([None, 1]))
    try:
        print(json.dumps(line))
    except Exception:
        pass
