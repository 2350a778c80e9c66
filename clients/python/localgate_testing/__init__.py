"""Test against localgate from Python: a client for its admin routes and a pytest plugin.

Standard library only. ``Localgate`` talks to a running server; ``Instance`` is one isolated
data set of it. ``localgate_testing.pytest_plugin`` gives the fixtures ``localgate`` and
``localgate_instance``.
"""

from .client import Instance, Localgate, LocalgateError, Response, mint_token

__all__ = ["Instance", "Localgate", "LocalgateError", "Response", "mint_token"]
