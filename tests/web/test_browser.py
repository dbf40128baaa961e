"""The page in a real headless Chromium (Debian's ``chromium``) over the DevTools protocol:
it loads, searches as you type, opens a record with its chain, and pins it through the API
with the page's own token and Origin.

Without a Chromium on PATH this test is skipped, unless ``AGENTCTX_TEST_BROWSER=require``
(``make test`` installs Chromium and sets it, so there it fails instead)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentctx.store import Store
from agentctx.store import records as rec
from tests.support.devtools import Chromium, find_chromium
from tests.web.conftest import Site


@pytest.fixture
def browser() -> Iterator[Chromium]:
    if find_chromium() is None:
        message = "no chromium on PATH (Debian: apt-get install chromium)"
        if os.environ.get("AGENTCTX_TEST_BROWSER") == "require":
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    with Chromium.launch() as running:
        yield running


def test_the_page_searches_opens_a_record_and_pins_it(site: Site, browser: Chromium,
                                                      isolated_home: Path) -> None:
    browser.navigate(f"http://127.0.0.1:{site.port}/")
    rows = "[...document.querySelectorAll('#records .row')].map(r => r.dataset.id)"
    first = browser.wait_for(f"{rows}.length === 2 && {rows}")
    assert set(first) == {site.data.connect, site.data.style}
    assert browser.evaluate("performance.getEntriesByName('first-record-row').length") == 1

    browser.type_text("#q", "Connect RPC")
    browser.wait_for(f"{rows}.length === 1")
    assert browser.evaluate(rows) == [site.data.connect]
    assert "for “Connect RPC”" in browser.evaluate("document.getElementById('count').textContent")

    browser.evaluate("document.querySelector('#records .row').click()")
    browser.wait_for("document.getElementById('detail-title')?.textContent === "
                     + json.dumps("Use Connect RPC between the services"))
    chain = browser.evaluate("[...document.querySelectorAll('.chain li')].map(li => li.innerText)")
    assert "Use gRPC between the services" in chain[0]
    assert "browsers need to call the services" in chain[0]

    browser.evaluate("[...document.querySelectorAll('#detail button')]"
                     ".find(b => b.textContent === 'Pin').click()")
    browser.wait_for("document.querySelector('#detail .badge.pin') !== null")
    assert browser.evaluate("document.getElementById('error').hidden") is True
    with Store.open(isolated_home / "agentctx.db") as db:
        record = rec.get(db, site.data.connect)
        assert record.pinned
        assert rec.edits_of(db, record.id)[-1].actor == "web"


def test_the_graph_draws_the_chain_and_a_click_opens_a_record(site: Site,
                                                              browser: Chromium) -> None:
    browser.navigate(f"http://127.0.0.1:{site.port}/#graph")
    legend = browser.wait_for("document.getElementById('graph-legend')?.textContent")
    assert legend.startswith("2 records, 1 file, 2 links")
    # Wait for the layout to settle, then click the older version where it is drawn.
    where = json.dumps(site.data.grpc)
    browser.wait_for(f"(() => {{ const a = window.AgentctxGraph.shown().screenOf({where}); "
                     "return new Promise(r => setTimeout(() => { const b = window.AgentctxGraph"
                     f".shown().screenOf({where}); r(Math.abs(a.x - b.x) + Math.abs(a.y - b.y) "
                     "< 0.5 && b); }, 100)); })()")
    point = browser.evaluate(f"window.AgentctxGraph.shown().screenOf({where})")
    for kind in ("mousePressed", "mouseReleased"):
        browser.call("Input.dispatchMouseEvent", {"type": kind, "x": point["x"],
                                                  "y": point["y"], "button": "left",
                                                  "clickCount": 1})
    browser.wait_for("document.getElementById('detail-title')?.textContent === "
                     + json.dumps("Use gRPC between the services"))
    assert browser.evaluate("location.hash") == "#records"
