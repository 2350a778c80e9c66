"""Test against localgate from Python: a client for its admin routes and a pytest plugin.

Standard library only. ``Localgate`` talks to a running server; ``Instance`` is one isolated
data set of it. Each has ``faults`` (``Faults``) and ``requests`` (``Requests``, the request
journal): an instance's own, and on ``Localgate`` the default data set's.
``localgate_testing.pytest_plugin`` gives the fixtures ``localgate`` and ``localgate_instance``.
"""

from .client import Faults, Instance, Localgate, LocalgateError, Requests, Response, mint_token

__all__ = ["Faults", "Instance", "Localgate", "LocalgateError", "Requests", "Response", "mint_token"]
