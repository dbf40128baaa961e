"""Does a prompt need the project's memory at all? What kind of prompt it is, from its words.

Most of what a developer types to Claude Code needs nothing from agentctx: an acknowledgement
("thanks, that worked", "ok go ahead"), a question about the conversation itself ("what did you
just change?"), an edit of the code on screen ("rename this variable", "add a docstring to that
function"), or a general programming question ("how do I reverse a list in python"). Those words
still match records ("worked", "change", "function"), so the per-prompt judgement weighs the kind
of prompt beside its evidence (:mod:`agentctx.judgement`): :data:`CHAT`, :data:`EDIT` and
:data:`GENERIC` prompts need far stronger evidence than a :data:`PROJECT` one.

A prompt that speaks of the project ("we", "our", "the team", "prod", "like we usually do") is
never taken for a generic or an edit one. Standard library only: the per-prompt hook calls it.
"""

from __future__ import annotations

import re

CHAT, EDIT, GENERIC, PROJECT = "chat", "edit", "generic", "project"
KINDS = (CHAT, EDIT, GENERIC, PROJECT)

# Words of acknowledgements and chit-chat: a prompt made only of these (and punctuation, emoji)
# is talk about the conversation, not a question about the project.
_CHAT_WORDS = frozenset("""
thanks thank thx ty tysm ok okay k kk cool nice great perfect awesome lol lmao haha heh yeah yes
yep yup ya yea sure fair go ahead ship it that this works worked working done next one sounds
sound good lgtm hmm hm let me try looks look right got gotcha agreed agree fine alright all
makes sense understood sweet brilliant excellent amazing wonderful love beautiful way cleaner
better much wow oh ah see thats that's it's its you no nope not quite please do continue proceed
keep going again now just exactly true indeed well so nice one i i'll ill we'll will then go on
sgtm noted cheers appreciated appreciate nvm nevermind never mind mind whoops oops sorry my bad
bad wait hold on stop there good job work what thought think guess figured knew
""".split())
# Questions and requests about the conversation itself.
_META = re.compile(
    r"\b(?:what (?:did|have) you (?:just )?(?:change|changed|do|did|done|edit|edited|write|"
    r"wrote|touch|touched)|undo (?:that|this|it|the last|your)|revert (?:that|this|it|your|the "
    r"last)|say (?:that|it) again|explain (?:that|this|what you (?:did|just did))|try (?:that|it) "
    r"again|do (?:it|that) again|show me (?:the|your) (?:diff|changes)|where were you)\b")
_EDIT_VERBS = (
    "add|rename|extract|inline|wrap|turn|make|sort|split|fix|change|convert|move|remove|delete|"
    "drop|refactor|format|reformat|indent|dedent|simplify|replace|update|comment|uncomment|"
    "document|rewrite|clean ?up|clean|shorten|swap|reorder|align|tidy|bump|rename|type|annotate|"
    "split|merge|combine|flatten|inline|use|put|pull|pass|return|log|print|test")
_EDIT = re.compile(r"^(?:(?:please|pls|can you|could you|would you|now|ok|okay|then|also|and)"
                   r"[,]?\s+)*(?:" + _EDIT_VERBS + r")\b")
_DEICTIC = re.compile(r"\b(?:this|that|these|those|here|above|below|it)\b")
_LANGUAGES = (r"python|javascript|js|typescript|ts|node|bash|shell|zsh|go|golang|rust|java|"
              r"kotlin|swift|c\+\+|c#|ruby|php|sql|postgres|css|html|regex|jq|awk|sed|yaml|json|"
              r"vim|git|linux|unix")
_GENERIC = re.compile(
    r"^(?:(?:hey|so|quick q|q|question|general q)[:,]?\s+)?(?:explain |what(?:'s|s| is| are)? "
    r"the (?:difference|diff|diffrence)|(?:what(?:'s| is)? )?(?:the )?diff(?:erence|rence)? "
    r"between|write (?:a|me|an) (?:\w+ )?(?:function|script|regex|query|snippet|one-?liner|"
    r"class|test for a)|give me (?:a|an) (?:\w+ )?(?:regex|one-?liner|snippet|example)|"
    r"(?:bash |shell |python |js )?one-?liner|regex (?:for|to|that)|jq (?:filter|query|to))"
    r"|\b(?:how (?:do|can|would|should) (?:i|you|one)|how to|what(?:'s| is) the (?:best|"
    r"idiomatic|fastest|cleanest) way to)\b.*\b(?:in|with|using) (?:" + _LANGUAGES + r")\b"
    r"|\b(?:" + _LANGUAGES + r")\b.*\bvs\.? |\bvs\.? .*\bin (?:" + _LANGUAGES + r")\b"
    r"|^convert .*\b(?:in|to|with|using) (?:" + _LANGUAGES + r")\b|\b(?:" + _LANGUAGES +
    r") command (?:to|for|that)\b|^what does (?:" + _LANGUAGES + r")\b.*\bdo\b|time complexity")
# The project speaking: never a generic question or an edit of what is on screen.
_PROJECT = re.compile(
    r"\b(?:we|we're|we've|weve|our|ours|us|team|teammates?|prod|production|staging|our app|"
    r"usually|convention|conventions|house style|like before|as before|last time|again with)\b")
_WORD = re.compile(r"[a-z0-9'’]+")


def kind(prompt: str) -> str:
    """The kind of ``prompt``: :data:`CHAT`, :data:`EDIT`, :data:`GENERIC` or :data:`PROJECT`."""
    text = " ".join(prompt.lower().replace("\u2019", "'").split())
    words = [w.strip("'") for w in _WORD.findall(text)]
    if (words and len(words) <= 10 and all(w in _CHAT_WORDS for w in words)) or \
            (len(words) <= 12 and _META.search(text)):
        return CHAT
    if not words:
        return CHAT
    if _PROJECT.search(text):
        return PROJECT
    if _GENERIC.search(text):
        return GENERIC
    if _EDIT.search(text) and _DEICTIC.search(text):
        return EDIT
    return PROJECT
