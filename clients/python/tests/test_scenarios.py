"""Scenario files from Python: the example played on a fresh instance and on one of the plugin's, and a failing step."""

import os

import pytest

from localgate_testing import LocalgateError, ScenarioFailed

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "..")
EXAMPLE = os.path.join(ROOT, "examples", "scenarios", "bank-transfer.yaml")
WRONG = os.path.join(ROOT, "test", "fixtures", "scenarios", "wrong-expectation.yaml")
# The TypeScript kit rejects with the same words (test/scenarios.ts).
WRONG_MESSAGE = "\n".join([
    "Step 1 (Alice deposits by bank transfer) failed: POST /v1/pay/gateway/deposit 201: the answer's body is not what was expected (1 difference)",
    '  $.status: expected "completed", got "pending"',
])


def test_the_example_runs_on_a_fresh_instance_made_with_its_instance_block(localgate):
    run = localgate.run_scenario(EXAMPLE)
    assert run["ok"] is True, run["message"]
    assert [step["kind"] for step in run["steps"]] == ["request", "clock", "request", "event", "webhook"]
    assert run["instance"] is None


@pytest.mark.localgate(seed="none", pay=True, clock="2030-01-01T00:00:00Z", ids="sequential")
def test_the_example_runs_on_the_plugins_instance(localgate_instance):
    run = localgate_instance.run_scenario(EXAMPLE)
    assert run["ok"] is True, run["message"]
    assert run["captures"] == {"deposit": "00000000-0000-4000-8000-000000000002"}
    assert run["instance"] == localgate_instance.id


def test_a_wrong_expectation_fails_naming_the_step(localgate):
    with pytest.raises(ScenarioFailed) as failed:
        localgate.run_scenario(WRONG)
    assert str(failed.value) == WRONG_MESSAGE
    assert failed.value.run["failure"]["step"] == 1


def test_a_file_that_cannot_run_is_refused_naming_the_step(localgate, tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("name: bad\nsteps:\n  - as: bob\n    request: { method: GET, path: /v1/commerce/products }\n")
    with pytest.raises(LocalgateError) as refused:
        localgate.run_scenario(str(path))
    assert refused.value.status == 400
    assert refused.value.code == "invalid_scenario"
    assert 'Step 1 (GET /v1/commerce/products): "as" names the actor "bob", which actors does not hold (it holds none)' in str(refused.value)
