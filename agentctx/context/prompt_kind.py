"""Does a prompt need the project's memory at all? What kind of prompt it is, from its words.

Most of what a developer types to Claude Code needs nothing from agentctx: an acknowledgement
("thanks, that worked", "ok go ahead"), a question about the conversation itself ("what did you
just change?"), an edit of the code on screen ("rename this variable", "add a docstring to that
function"), or a general programming question ("how do I reverse a list in python"). Those words
still match records ("worked", "change", "function"), so the per-prompt judgement weighs the kind
of prompt beside its evidence (:mod:`agentctx.context.judgement`): a :data:`CHAT` prompt gets
nothing, and
:data:`EDIT` and :data:`GENERIC` prompts need far stronger evidence than a :data:`PROJECT` one.

A prompt that speaks of the project ("we", "our", "the team", "prod", "like we usually do") is
never taken for a generic or an edit one. Word sets and phrase prefixes only, no regular
expression to compile: the per-prompt hook calls it on every prompt.
"""

from __future__ import annotations

from agentctx.core.words import tokens

CHAT, EDIT, GENERIC, PROJECT = "chat", "edit", "generic", "project"
KINDS = (CHAT, EDIT, GENERIC, PROJECT)

# Words of acknowledgements and chit-chat: a prompt made only of these (and punctuation, emoji)
# is talk about the conversation, not a question about the project.
_CHAT_WORDS = frozenset("""
thanks thank thx ty tysm ok okay k kk cool nice great perfect awesome lol lmao haha heh yeah yes
yep yup ya yea sure fair go ahead ship it that this works worked working done next one sounds
sound good lgtm hmm hm let me try looks look right got gotcha agreed agree fine alright all
makes sense understood sweet brilliant excellent amazing wonderful love beautiful way cleaner
better much wow oh ah see thats its you no nope not quite please do continue proceed keep going
again now just exactly true indeed well so on will then sgtm noted cheers appreciated appreciate
nvm nevermind never mind whoops oops sorry my bad wait hold stop there job work what thought
think guess figured knew i ll we s t re ve d m
""".split())
# Answers to a question Claude asked ("1", "option 2", "the second one", "y"): a prompt of at most
# this many words, each a number, a single character, a chat word or one of these.
_ANSWER_WORDS = frozenset("option options choice number the first second third last both neither "
                          "either a b c".split())
_ANSWER_MAX_WORDS = 4
# Phrases about the conversation itself (as folded tokens joined by spaces).
_META = ("what did you change", "what did you just change", "what have you changed",
         "what did you do", "what did you just do", "what did you edit", "what did you write",
         "what did you touch", "undo that", "undo this", "undo it", "undo the last",
         "undo your", "revert that", "revert this", "revert it", "revert your",
         "revert the last", "say that again", "say it again", "explain that", "explain this",
         "explain what you did", "try that again", "try it again", "do it again",
         "do that again", "show me the diff", "show me your changes", "show me the changes")
_EDIT_VERBS = frozenset("""
add rename extract inline wrap turn make sort split fix change convert move remove delete drop
refactor format reformat indent dedent simplify replace update comment uncomment document rewrite
clean shorten swap reorder align tidy bump type annotate merge combine flatten use put pull pass
return log print test
""".split())
_LEADING = frozenset("please pls can could would you now ok okay then also and".split())
_DEICTIC = frozenset("this that these those here above below it".split())
_LANGUAGES = frozenset("""
python javascript js typescript ts node bash shell zsh go golang rust java kotlin swift cpp c
ruby php sql postgres css html regex jq awk sed yaml json vim git linux unix flexbox
""".split())
# A prompt starting with one of these asks a general question, not one about the project.
_GENERIC_STARTS = ("explain ", "what is the difference", "what s the difference",
                   "whats the difference", "whats the diffrence", "what s the diff",
                   "the difference between", "difference between", "diff between",
                   "write a function", "write me a function", "write a script", "write a regex",
                   "write a query", "write a snippet", "write a one liner", "write me a",
                   "give me a regex", "give me a one liner", "give me an example",
                   "regex for", "regex to", "regex that", "jq filter", "jq query", "one liner",
                   "bash one liner", "time complexity")
# ... or, naming a language or tool, asks how to do something in general.
_HOW_TO = ("how do i ", "how can i ", "how would i ", "how should i ", "how to ",
           "how do you ", "how can you ", "how does one ", "what is the best way to ",
           "what s the best way to ", "what is the idiomatic way to ", "convert ",
           "what does ")
# The project speaking: never a generic question or an edit of what is on screen.
_PROJECT_WORDS = frozenset("""
we our ours us weve team teammate teammates prod production staging usually convention
conventions
""".split())
_PROJECT_PHRASES = ("house style", "like before", "as before", "last time", "our app")


def kind(prompt: str) -> str:
    """The kind of ``prompt``: :data:`CHAT`, :data:`EDIT`, :data:`GENERIC` or :data:`PROJECT`."""
    words = tokens(prompt.replace("\u2019", "'"))
    if not words:
        return CHAT
    text = " ".join(words)
    padded = f" {text} "
    if (len(words) <= 12 and all(w in _CHAT_WORDS for w in words)) or \
            (len(words) <= 14 and any(f" {phrase} " in padded for phrase in _META)) or \
            _an_answer(words):
        return CHAT
    if not _PROJECT_WORDS.isdisjoint(words) or any(p in padded for p in _PROJECT_PHRASES):
        return PROJECT
    if _generic(text, words):
        return GENERIC
    start = 0
    while start < len(words) - 1 and words[start] in _LEADING:
        start += 1
    if words[start] in _EDIT_VERBS and not _DEICTIC.isdisjoint(words):
        return EDIT
    return PROJECT


def _an_answer(words: list[str]) -> bool:
    """Whether ``words`` answer a choice Claude offered: "1", "2.", "option 3", "b", "y"."""
    return len(words) <= _ANSWER_MAX_WORDS and any(w.isdigit() or len(w) == 1 for w in words) \
        and all(w.isdigit() or len(w) == 1 or w in _CHAT_WORDS or w in _ANSWER_WORDS
                for w in words)


_IN = frozenset("in with using via".split())


def _generic(text: str, words: list[str]) -> bool:
    if text.startswith(_GENERIC_STARTS):
        return True
    # A language named as one ("in python", "git command to", "what does git …"), not a file
    # name's extension ("dbt/models/orders.sql").
    named = [i for i, w in enumerate(words) if w in _LANGUAGES and (
        (i > 0 and words[i - 1] in _IN) or (i + 1 < len(words) and words[i + 1] == "command")
        or (i == 2 and text.startswith("what does ")) or (i == 0 and len(words) > 2))]
    if not named:
        return False
    return text.startswith(_HOW_TO) or " vs " in f" {text} " or any(
        i + 1 < len(words) and words[i + 1] == "command" for i in named)
