import ChildProcess from 'node:child_process';
import Path from 'node:path';

import Code from '@hapi/code';

import { type Finished, runProcess } from './processes';


const { expect } = Code;


// The Python package users import: clients/python/localgate_testing, its pytest plugin and its own tests.
export const packageDir = Path.join(__dirname, '..', '..', 'clients', 'python');

// Debian's python3-pytest serves /usr/bin/python3; a python3 earlier on PATH may have pytest of its own.
export const interpreters = ['python3', '/usr/bin/python3'];
export const python = interpreters.find((candidate) => ChildProcess.spawnSync(candidate, ['-c', 'import pytest'], { stdio: 'ignore' }).status === 0);


/** Runs a command to its end in a folder. */
export function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<Finished> {

    return runProcess(command, args, { cwd, env });
}


/** Runs the package's pytest suite with the environment given; resolves to its exit code and output. */
export function runPytest(env: NodeJS.ProcessEnv, tests = 'tests'): Promise<Finished> {

    expect(python, 'CI=true needs python3 with pytest: .ci/run installs python3-pytest').to.exist();
    return run(python!, ['-m', 'pytest', '-p', 'no:cacheprovider', '-v', tests], packageDir, {
        PATH: process.env.PATH, HOME: process.env.HOME, PYTHONPATH: packageDir, PYTHONDONTWRITEBYTECODE: '1', ...env
    });
}


// Every test of the package's suite, as pytest -v reports it passing against one server.
export const passingTests = [
    'tests/test_client.py::test_the_instance_url_answers_plain_http_clients PASSED',
    'tests/test_client.py::test_snapshot_restore_and_reset PASSED',
    'tests/test_client.py::test_the_clock_freezes_and_moves PASSED',
    'tests/test_client.py::test_a_refused_admin_call_raises_with_the_error_code PASSED',
    'tests/test_client.py::test_tokens_need_a_future_expiry PASSED',
    'tests/test_client.py::test_a_fork_copies_the_instance_as_it_is_now PASSED',
    'tests/test_client.py::test_the_default_data_set_exports_as_a_fixture_an_instance_loads PASSED',
    'tests/test_client.py::test_an_export_loads_back_into_a_new_instance PASSED',
    'tests/test_example.py::test_a_booking_is_private_to_its_customer PASSED',
    'tests/test_example.py::test_each_test_starts_from_the_demo_data_again PASSED',
    'tests/test_example.py::test_an_empty_world_with_a_frozen_clock PASSED',
    'tests/test_faults_journal.py::test_an_instance_fault_fires_as_set_counts_its_hits_and_clears PASSED',
    'tests/test_faults_journal.py::test_an_instance_journal_lists_counts_finds_and_clears PASSED',
    'tests/test_faults_journal.py::test_the_default_data_set_has_its_own_faults_and_journal PASSED',
    'tests/test_receiver.py::test_records_verified_deliveries_in_arrival_order PASSED',
    'tests/test_receiver.py::test_says_why_a_delivery_is_not_verified PASSED',
    'tests/test_receiver.py::test_checks_timestamps_against_the_clock_it_is_given PASSED',
    'tests/test_receiver.py::test_records_a_body_that_is_no_event_with_event_none PASSED',
    'tests/test_receiver.py::test_answers_what_it_is_told_then_its_default PASSED',
    'tests/test_receiver.py::test_waits_for_deliveries_and_says_how_many_came_when_they_do_not PASSED',
    'tests/test_receiver.py::test_answers_413_to_a_body_over_the_bound PASSED',
    'tests/test_receiver.py::test_refuses_a_secret_that_holds_no_key PASSED',
    'tests/test_receiver.py::test_signs_as_the_reference_library_does PASSED',
    'tests/test_receiver.py::test_says_why_when_it_cannot_read_when_an_attempt_was_due PASSED',
    'tests/test_time.py::test_a_bank_transfer_deposit_is_pending_until_the_clock_passes_its_two_days PASSED',
    'tests/test_time.py::test_a_move_with_nothing_due_applies_nothing_and_keeps_the_record PASSED',
    'tests/test_time.py::test_the_default_data_set_has_a_clock_of_its_own PASSED',
    'tests/test_webhooks.py::test_a_settled_transfer_is_credited_once_though_its_webhook_came_twice PASSED',
    'tests/test_webhooks.py::test_endpoints_events_and_deliveries_are_read_flushed_and_cleared PASSED',
    'tests/test_webhooks.py::test_each_attempt_of_a_long_move_is_checked_against_the_instant_it_was_due PASSED',
    'tests/test_webhooks.py::test_every_completion_gets_through_an_outage_a_pause_and_a_secret_rotation PASSED'
];
