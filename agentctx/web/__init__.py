"""The optional local web view (``agentctx web``): a JSON API and one static page, served by the
standard library's ``http.server`` on 127.0.0.1 with the seed's ADR-015 security rules.

``agentctx.web.server`` is the server (:func:`~agentctx.web.server.start` runs it on a thread
for the TUI), ``agentctx.web.api`` the routes over the core, ``static/`` the page and its
scripts (no CDN, nothing fetched from elsewhere). Nothing on the hook path imports this package.
"""
