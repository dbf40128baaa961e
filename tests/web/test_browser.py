"""The page in a real headless Chromium (Debian's ``chromium``) over the DevTools protocol:
it loads, searches as you type, opens a record with its chain, and pins it through the API
with the page's own token and Origin.

Without a Chromium on PATH this test is skipped, unless ``AGENTCTX_TEST_BROWSER=require``
(``make test`` installs Chromium and sets it, so there it fails instead)."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentctx.store import Store
from agentctx.store import records as rec
from agentctx.store.models import Draft
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


def _viewport(browser: Chromium, width: int, height: int = 900) -> None:
    browser.call("Emulation.setDeviceMetricsOverride", {"width": width, "height": height,
                                                        "deviceScaleFactor": 1,
                                                        "mobile": False})


def _many_records(site: Site, isolated_home: Path, count: int = 40) -> None:
    with Store.open(isolated_home / "agentctx.db") as db:
        for n in range(count):
            rec.add(db, Draft(type="discovery", title=f"Finding number {n} about the cache",
                              body="Seen while profiling."), project_id=site.data.project)


ROWS = "[...document.querySelectorAll('#records .row')]"
DETAIL_BOX = "document.getElementById('detail').getBoundingClientRect()"


def test_at_800_px_a_click_brings_the_detail_into_view_above_the_list(
        site: Site, browser: Chromium, isolated_home: Path) -> None:
    """Below 900 px the detail sits above the list and a click scrolls it into view (it used to
    render under the whole list, so a click seemed to do nothing)."""
    _many_records(site, isolated_home)
    _viewport(browser, 800)
    browser.navigate(f"http://127.0.0.1:{site.port}/")
    browser.wait_for(f"{ROWS}.length > 30")
    browser.evaluate(f"{ROWS}[30].scrollIntoView(); {ROWS}[30].click()")
    browser.wait_for("document.getElementById('detail-title') !== null")
    browser.wait_for(f"Math.abs({DETAIL_BOX}.top) < 2")  # scrolled to the detail's top
    box = browser.evaluate(f"(() => {{ const d = {DETAIL_BOX}, l = document.getElementById("
                           "'records').getBoundingClientRect(); return [d.top, d.bottom, "
                           "l.top, window.innerHeight]; })()")
    detail_top, detail_bottom, list_top, height = box
    assert detail_bottom <= list_top and detail_top < height


def test_at_1280_px_the_detail_sits_beside_the_list(site: Site, browser: Chromium) -> None:
    _viewport(browser, 1280)
    browser.navigate(f"http://127.0.0.1:{site.port}/")
    browser.wait_for(f"{ROWS}.length === 2")
    browser.evaluate(f"{ROWS}[0].click()")
    browser.wait_for("document.getElementById('detail-title') !== null")
    left, top = browser.evaluate(f"[{DETAIL_BOX}.left, {DETAIL_BOX}.top]")
    row = browser.evaluate(f"{ROWS}[0].getBoundingClientRect().right")
    assert left > row and top < 200


def test_the_selected_row_stands_out_and_leaving_the_results_clears_the_detail(
        site: Site, browser: Chromium) -> None:
    _viewport(browser, 1280)
    browser.navigate(f"http://127.0.0.1:{site.port}/")
    browser.wait_for(f"{ROWS}.length === 2")
    browser.evaluate(f"{ROWS}.find(r => r.dataset.id === {json.dumps(site.data.connect)})"
                     ".click()")
    browser.wait_for("document.getElementById('detail-title') !== null")
    looks = browser.evaluate(f"{ROWS}.map(r => [r.getAttribute('aria-selected'), "
                             "getComputedStyle(r).backgroundColor, "
                             "getComputedStyle(r).boxShadow])")
    chosen = [look for look in looks if look[0] == "true"]
    others = [look for look in looks if look[0] == "false"]
    assert len(chosen) == 1 and others
    assert chosen[0][1] != others[0][1] and chosen[0][2] != "none"
    browser.type_text("#q", "Makefiles")
    browser.wait_for(f"{ROWS}.length === 1")
    browser.wait_for("document.getElementById('detail-title') === null")
    assert "Pick a record" in browser.evaluate("document.getElementById('detail').textContent")


def test_times_are_local_to_the_minute_and_the_audit_trail_reads(site: Site,
                                                                browser: Chromium) -> None:
    assert site.request("POST", f"/api/records/{site.data.connect}/pin",
                        {"pinned": True}).status == 200
    assert site.request("POST", f"/api/records/{site.data.connect}/edit",
                        {"title": "Use Connect RPC between all the services"}).status == 200
    browser.navigate(f"http://127.0.0.1:{site.port}/")
    browser.wait_for(f"{ROWS}.length === 2")
    browser.evaluate(f"{ROWS}.find(r => r.dataset.id === {json.dumps(site.data.connect)})"
                     ".click()")
    browser.wait_for("document.getElementById('detail-title') !== null")
    times = browser.evaluate("[...document.querySelectorAll('#detail time')]"
                             ".map(t => t.textContent)")
    assert times and all(re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d", t) for t in times), times
    trail = browser.evaluate("[...document.querySelectorAll('#detail .edits li')]"
                             ".map(li => li.textContent)")
    assert any(line.endswith("web: pinned") for line in trail), trail
    assert any("title: “Use Connect RPC between the services” → “Use Connect RPC between all "
               "the services”" in line for line in trail), trail


def test_a_refused_write_shows_beside_its_field(site: Site, browser: Chromium) -> None:
    browser.navigate(f"http://127.0.0.1:{site.port}/")
    browser.wait_for(f"{ROWS}.length === 2")
    browser.evaluate(f"{ROWS}.find(r => r.dataset.id === {json.dumps(site.data.connect)})"
                     ".click()")
    browser.wait_for("document.getElementById('detail-title') !== null")
    browser.evaluate("[...document.querySelectorAll('#detail button')]"
                     ".find(b => b.textContent === 'Supersede').click()")
    browser.evaluate("document.querySelector('[aria-label=\"New body\"]').value = 'Now gRPC-web'")
    browser.evaluate("document.querySelector('[aria-label=\"Rationale\"]').value = '   '")
    browser.evaluate("document.querySelector('form.write').requestSubmit()")
    said = browser.wait_for("document.querySelector('.field-error[data-for=\"rationale\"]')"
                            ".textContent")
    assert "rationale" in said
    assert browser.evaluate("document.getElementById('error').hidden") is True
    with Store.open() as db:
        assert rec.get(db, site.data.connect).current  # nothing was written


def test_the_graph_labels_its_nodes_and_shows_a_legend(site: Site, browser: Chromium) -> None:
    browser.navigate(f"http://127.0.0.1:{site.port}/#graph")
    browser.wait_for("document.getElementById('graph-legend')?.textContent")
    labels = browser.wait_for("window.AgentctxGraph.shown()?.labels()")
    assert "api.py" in labels  # a file by its name
    assert "Use gRPC between the servic…" in labels  # a record by the start of its title
    legend = browser.evaluate("[...document.querySelectorAll('#graph-legend .key')]"
                              ".map(k => [k.textContent, k.querySelector('.swatch')"
                              ".style.background !== ''])")
    assert ["decision", True] in legend and ["superseded", True] in legend
    assert ["file", True] in legend
