"""The Backend protocol is what its callers use: every backend has each of its members, and ``with_noise``
draws noise on recorded data only (the campaign executor calls it on whatever backend a run has)."""

from __future__ import annotations

import inspect

import pytest

from bat.analysis.hypertune.search import _Answers
from bat.backends.command import CommandBackend
from bat.backends.emulated.backend import EmulatedBackend
from bat.backends.live.backend import LiveBackend
from bat.backends.replay import ReplayBackend
from bat.core.errors import BackendError
from bat.core.problem import Backend
from bat.protocol.remote import _Server
from bat.run.recording.run_journal import JournalledBackend
from bat.testing.synthetic import FakeBackend

BACKENDS = [ReplayBackend, CommandBackend, LiveBackend, EmulatedBackend, FakeBackend, JournalledBackend, _Answers,
            _Server]
MEMBERS = [name for name, _ in inspect.getmembers(Backend, inspect.isfunction) if not name.startswith("_")]


def test_the_protocol_names_what_the_executor_calls() -> None:
    assert {"describe", "evaluate", "with_noise", "close"} <= set(MEMBERS)


@pytest.mark.parametrize("backend", BACKENDS, ids=lambda cls: cls.__name__)
def test_every_backend_has_every_member_with_its_parameters(backend: type) -> None:
    for name in MEMBERS:
        wanted = list(inspect.signature(getattr(Backend, name)).parameters)
        assert list(inspect.signature(getattr(backend, name)).parameters)[: len(wanted)] == wanted, name


def test_a_backend_without_recorded_repeats_is_itself_without_noise_and_refuses_noise() -> None:
    backend = FakeBackend()
    assert backend.with_noise("none", 3) is backend
    with pytest.raises(BackendError, match=r"noise 'bootstrap': the \S+ backend has no recorded repeats"):
        backend.with_noise("bootstrap", 3)
