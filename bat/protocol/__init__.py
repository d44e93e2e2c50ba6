"""The BAT tuner protocol: any tuner, in any language, drives a Problem over line-delimited JSON.

A client (the tuner) sends one JSON object per line and reads one reply per
line: ``hello`` (the problem: parameters, constraints, budget, seed,
objective), ``evaluate``, ``batch``, ``valid``, ``prior`` (version 2: a page
of another GPU's measured data, the transfer study's prior) and ``done``. The server side
serves an ordinary ``bat.core.problem.Problem``, so an external tuner runs under
exactly the rules and the trace of an in-process one. docs/PROTOCOL.md is the
specification; bat/schemas/protocol/v1/ and v2/ hold a JSON Schema per message.

Modules: ``wire`` (checking requests, writing replies), ``hello`` (the
problem as a client sees it), ``server`` (a session over a pair of streams),
``client`` (a Python client, standard library only), ``remote`` (any BAT
tuner run as a client: ``python -m bat.protocol.remote TUNER``).
"""

#: The newest protocol version this package speaks (``hello.protocol``); the server also speaks the older ones.
PROTOCOL_VERSION = 2
#: Every version the server speaks: 2 adds the transfer prior (``hello`` target.others, the ``prior`` request).
PROTOCOL_VERSIONS = (1, 2)
