"""The reference's in-process rates on the typical request, for benches/core.rs.

Prints two numbers: validations per second and check + render per second. Run with the oracle's
python (`$(crates/askuser-core/tests/oracle/setup.sh)`); ASKUSER_ORACLE_DIR overrides where
oracle.py is (default: ../tests/oracle beside this file).
"""
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ORACLE = os.environ.get('ASKUSER_ORACLE_DIR', os.path.join(HERE, '..', 'tests', 'oracle'))
sys.path.insert(0, ORACLE)

import oracle  # noqa: E402
from pydantic_ai_harness.ask_user import AskUserAnswer, AskUserRequest, AskUserResponse, ask_user_result  # noqa: E402

DATA = os.path.join(HERE, '..', 'tests', 'data')
args_text = open(os.path.join(DATA, 'typical-4x4.args.json')).read()
response_raw = json.load(open(os.path.join(DATA, 'typical-4x4.response.json')))


def rate(f, seconds=1.5):
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(200):
            f()
        n += 200
    return n / (time.perf_counter() - start)


validated = oracle.validate_args(args_text, 'json')
request = AskUserRequest(questions=tuple(validated['questions']), id='bench')
response = AskUserResponse(answers=tuple(
    AskUserAnswer(header=a['header'], selected=tuple(a['selected'])) for a in response_raw['answers']))

validate_rate = max(rate(lambda: oracle.validate_args(args_text, 'json')) for _ in range(3))
render_rate = max(rate(lambda: oracle.model_text_for_result(ask_user_result(request, response))) for _ in range(3))
print(f'{validate_rate:.0f} {render_rate:.0f}')
