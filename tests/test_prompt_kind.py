"""The kind of a prompt, from its words: chat, an edit of the code on screen, a generic
programming question, or a question that may need the project's memory."""

from __future__ import annotations

import pytest

from agentctx.context.prompt_kind import CHAT, EDIT, GENERIC, PROJECT, kind


@pytest.mark.parametrize("prompt", [
    "thanks!", "ok, go ahead", "perfect 👍", "lgtm, ship it", "hmm ok let me try that",
    "what did you just change?", "can you undo that last edit", "nice one, that's way cleaner",
    "", "   ", "👍👍",
    # answers to a choice Claude offered
    "1", "2.", "option 3", "b", "y", "ok 2", "the second one, 2",
])
def test_chat(prompt: str) -> None:
    assert kind(prompt) == CHAT


@pytest.mark.parametrize("prompt", [
    "rename this variable to count", "add a docstring to that function",
    "please extract this block into a helper", "make it async",
    "wrap this in a try/except and log the error", "sort these imports",
])
def test_edits_of_the_code_on_screen(prompt: str) -> None:
    assert kind(prompt) == EDIT


@pytest.mark.parametrize("prompt", [
    "how do I reverse a list in python", "explain the difference between a mutex and a semaphore",
    "write a function that flattens a nested list", "regex for an email address",
    "what's the best way to deep copy an object in javascript", "git command to undo a rebase",
    "convert this csv to json in python",
])
def test_generic_programming_questions(prompt: str) -> None:
    assert kind(prompt) == GENERIC


@pytest.mark.parametrize("prompt", [
    "how do I run the tests", "how do we deploy to staging", "which queue do we use?",
    "rename the column like we usually do", "add a migration for this the way our convention says",
    "why is the invoice pdf missing the logo", "how do i create a db migration",
    "TypeError: Cannot read properties of undefined (reading 'map') in OrderList.tsx",
    "what did we decide about caching?", "still on flake8?",
    "python 3.11 or 3.12?", "port 5432", "error 503 on checkout",
])
def test_questions_that_may_need_the_project(prompt: str) -> None:
    assert kind(prompt) == PROJECT
