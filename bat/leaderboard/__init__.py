"""``bat leaderboard``: a static, signed site ranking tuners from ``bat compare`` results, and its verification.

sources (results folders, checked and merged) -> standings (every number
shown) -> pages and figures -> seal (a signed manifest of digests). Public:
``build`` and ``verify`` (``bat.leaderboard.site``).
"""

from __future__ import annotations

from bat.leaderboard.site import Built, TamperedSiteError, UnsealedSiteError, build, verify

__all__ = ["Built", "TamperedSiteError", "UnsealedSiteError", "build", "verify"]
