"""Test against localgate from Python: a client for its admin routes and a pytest plugin.

Standard library only. ``Localgate`` talks to a running server; ``Instance`` is one isolated
data set of it; either runs a scenario file (``run_scenario``). Each has ``faults`` (``Faults``) and ``requests`` (``Requests``, the request
journal): an instance's own, and on ``Localgate`` the default data set's.
An instance also sets its webhook endpoints and reads its events and webhook deliveries; ``start_receiver``
(``Receiver``) stands in for the service the webhooks go to, verifying each delivery's signature.
``localgate_testing.pytest_plugin`` gives the fixtures ``localgate``, ``localgate_instance`` and ``localgate_receiver``.
"""

from .client import Faults, Instance, Localgate, LocalgateError, Requests, Response, ScenarioFailed, mint_token
from .receiver import Delivery, Receiver, start_receiver

__all__ = ["Delivery", "Faults", "Instance", "Localgate", "LocalgateError", "Receiver", "Requests", "Response", "ScenarioFailed", "mint_token", "start_receiver"]
