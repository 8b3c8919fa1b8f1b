"""The server's core: what every feature builds on and nothing that is a feature.

:mod:`.transport` (JSON-RPC over stdio or TCP, hardened pygls), :mod:`.base` (the server class:
messages to the client, capabilities, lifecycle) and :mod:`.interface` (:class:`~.interface.Core`,
the narrow interface features are handed). The state the core shares with features -- folders and
their worker threads (:mod:`crystal_lsp.server.workspace`), documents' buffers, settings,
positions, URIs -- sits beside it in ``server/``; none of it imports a feature either.
"""
