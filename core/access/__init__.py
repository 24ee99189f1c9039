"""Who a person is, the role they have, and what that role allows: the one place that decides.

A person reaches PlanBoard signed in (the dashboard under ``[auth]``), as the OS user (the
command line, and the dashboard without sign-in) or, later, through an API token of their
own; each is an :class:`core.access.identity.Actor`. Roles come from a file or the run store
(:mod:`core.access.roles`); :mod:`core.access.policy` answers every "may this person do
this?" and raises :class:`core.errors.AccessDeniedError` when not; :mod:`core.access.audit`
records who did what.
"""
