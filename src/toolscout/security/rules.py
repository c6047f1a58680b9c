"""Phrase rules: instructions aimed at the model, requests for secrets, orders about other tools.

Ordinary tool descriptions also talk to the model ("you must provide an id", "pass your API
key", "use search_files first"), so no rule fires on one alarming word. A rule needs the
parts of an attack together, usually in one sentence: a secret *and* an order to hand it
over; another tool *and* a trigger *and* a change to its arguments; a scope of "every
request" *and* an action. Each rule names keywords it needs, so a clean text costs a few
substring checks.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field

__all__ = ["RULES", "Context", "Hit", "active_rules", "run_rules", "secret_default"]

Hit = tuple[str, str] | None
"""What a rule returns: ``(code, evidence)``, or ``None`` (each rule reports once per text)."""

_I = re.IGNORECASE

# -- sentences and evidence ------------------------------------------------------------
_SPLIT = re.compile(r"(?<=[.!?;])\s+|(?<=:)\s+(?=(?-i:[A-Z]))|\n\s*\n|\n(?=\s*[-*•#<\[])|</?\s*important\s*>", _I)


@dataclass(slots=True)
class Context:
    """One text being scanned, with what the rules need to know about its tool."""

    text: str
    own: frozenset[str] = frozenset()  # this tool's names, lower-case
    parameter: bool = False  # the text describes a parameter (so it is where data goes)
    siblings: frozenset[str] = frozenset()  # names of tools from the same source, lower-case
    low: str = ""
    words: frozenset[str] = frozenset()
    _sentences: list[str] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.low = self.text.lower()
        self.words = frozenset(_TOKEN.findall(self.low))

    @property
    def sentences(self) -> list[str]:
        if self._sentences is None:
            self._sentences = [s for s in (" ".join(p.split()) for p in _SPLIT.split(self.text)) if s]
        return self._sentences

    def has(self, group: frozenset[str], also: frozenset[str] | None = None) -> bool:
        """Whether the text has a word of ``group`` (and of ``also``): rules' cheap gates, a
        set intersection or two before any regular expression runs."""
        words = self.words
        return not words.isdisjoint(group) and (also is None or not words.isdisjoint(also))

    @property
    def names_tool(self) -> bool:
        """Whether anything in the text could name a tool (an identifier, backticks, "tool")."""
        return ("_" in self.text or "`" in self.text or not self.words.isdisjoint(_TOOL_WORDS)
                or _CAMEL_OR_KEBAB.search(self.text) is not None)


def _w(words: str) -> frozenset[str]:
    return frozenset(words.split())


_TOKEN = re.compile(r"[a-z]+")
_TOOL_WORDS = _w("tool tools function functions")
_CAMEL_OR_KEBAB = re.compile(r"[a-z][A-Z][a-z]|[a-z]-[a-z0-9]+-[a-z]")


def _window(text: str, start: int, end: int, width: int = 120) -> str:
    """About ``width`` characters of ``text`` around ``[start, end)``, on word boundaries."""
    lo = max(0, start - 30)
    if end - lo > width:
        lo = start
    if lo > 0:
        space = text.find(" ", lo, start)
        lo = space + 1 if space != -1 else lo
    hi = min(len(text), max(end, lo + width))
    if hi < len(text):
        space = text.rfind(" ", end, hi)
        hi = space if space != -1 else hi
    return text[lo:hi]


# -- shared vocabulary -----------------------------------------------------------------
_AI = r"(?:ai|a\.i\.|assistant|model|llm|agent|claude|gpt|chatgpt|copilot|gemini|bot)s?"
_SINK = re.compile(
    r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"  # e-mail
    r"|https?://[^\s\"'`<>)]+"  # URL
    r"|(?<![\w+])\+\d[\d\s().-]{7,}\d"  # phone number
    r"|\b[A-Z]{2}\d{2}[A-Z0-9]{11,30}\b"  # IBAN
    r"|\bbcc\b",
    _I,
)
_TRANSFER = (
    r"(?:send|forward|post|upload|transmit|copy|share|mirror|leak|exfiltrate|deliver|route|"
    r"redirect|include|pass|put|insert|attach|append|add|paste|embed|fill|provide|submit)"
)
_TRANSFER_RE = re.compile(rf"(?<!\bbe )(?<!\bis )(?<!\bare )\b{_TRANSFER}\b", _I)
_IDENT = r"(?-i:[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+|[a-z]+(?:[A-Z][a-z0-9]+)+|[a-z]+(?:-[a-z0-9]+){2,})"
"""Tool-shaped names: snake_case, camelCase, kebab-case with two hyphens or more."""
_PARAM = re.compile(
    r"\b(?:in|into|as|inside|to|via|through|under|using)\s+(?:the\s+|a\s+|its\s+)?[`'\"][\w.-]+[`'\"]"
    r"|\b(?:in|into|as|inside|via|through|under|using)\s+(?:the\s+)?\w+\s+(?:field|param(?:eter)?|argument|arg|body)\b"
    r"|\bthe\s+[`'\"]?\w+[`'\"]?\s+(?:field|param(?:eter)?|argument|arg)\s+(?:should|must|will|needs?\s+to)\b"
    r"|(?:field|param(?:eter)?|argument|arg)\s+[`'\"]\w+[`'\"]",
    _I,
)
"""Where data is put: a named parameter, argument or field."""
_CREDENTIAL_PARAM = re.compile(r"key|token|auth|password|passwd|secret|credential|bearer|cookie|session", _I)


# -- hidden instructions ---------------------------------------------------------------
_TAG = re.compile(
    r"<\s*/?\s*(?:important|system|instructions?|secret|hidden|admin|critical|sys|"
    r"system[_ -]?(?:prompt|message|note)|ai[_ -]?(?:instructions?|note))\s*>"
    r"|\[/?\s*(?:INST|SYSTEM|SYS)\s*\]"
    r"|<\|\s*(?:im_start|im_end|system|endoftext|eot_id|start_header_id)\s*\|>"
    r"|<<\s*/?\s*SYS\s*>>"
    r"|\{\{\s*[#/]?\s*(?:system|assistant|instructions?)\s*\}\}"
    rf"|<!--(?:(?!-->).){{0,400}}?\b(?:{_AI}|you|must|always|never|ignore|do\s+not|don'?t)\b"
    rf"|\b(?:attention|dear|hey|hello|hi)\s*,?\s+(?:the\s+)?(?:ai\s+|large\s+)?(?:language\s+)?{_AI}\s*[:,!]"
    rf"|\b(?:note|message|instructions?|reminder|notice)\s+(?:to|for)\s+(?:the\s+|all\s+|any\s+)?{_AI}\s*:"
    rf"|\bp\.\s?s\.?\s+(?:to|for)\s+(?:the\s+)?{_AI}\b"
    r"|(?:^|\n)[ \t#*-]*(?:system|admin|developer|assistant|ai)\s+(?:notice|note|message|instructions?|override|"
    r"prompt|directive|alert)s?\s*:"
    rf"|(?:^|\n)[ \t]*#+\s*(?:system\b|(?:instructions?|notes?|rules)\s+(?:to|for)\s+(?:the\s+)?{_AI})"
    rf"|\b{_AI}[-\s]only\b|\bfor\s+{_AI}\s+eyes\s+only\b"
    rf"|(?:^|[.!?(\n]\s*)(?:dear\s+)?{_AI}\s*[:,]\s+(?:you|please|pretend|always|never|do|don'?t|ignore|remember|"
    r"make|ensure|before|when|first|silently)\b",
    _I,
)


_TAG_WORDS = _w("important system instruction instructions secret hidden admin critical sys ai im endoftext "
                "eot start inst assistant")
_GREETINGS = _w("attention dear hey hello hi")
_HEADER_WORDS = _w("system admin developer assistant ai notice")
_AI_WORDS = _w("ai assistant assistants model models llm llms agent agents claude gpt chatgpt copilot gemini bot bots")
_VOCATIVE_NEXT = _w("you please pretend always never do don ignore remember make ensure before when first silently")
_NOTE_WORDS = _w("note message instruction instructions reminder notice")


def _tags_gate(c: Context) -> bool:
    if ("<" in c.text or "[" in c.text or "{{" in c.text) and c.has(_TAG_WORDS):
        return True
    if "<!--" in c.text:
        return True
    if c.has(_GREETINGS, _AI_WORDS):
        return True
    if ((":" in c.text or "#" in c.text) and c.has(_HEADER_WORDS)) or c.has(_NOTE_WORDS, _AI_WORDS):
        return True
    return c.has(_AI_WORDS) and ("only" in c.words or c.has(_VOCATIVE_NEXT))


def _tags(c: Context) -> Hit:
    m = _TAG.search(c.text)
    if m:
        return "instruction_tag", _window(c.text, m.start(), m.end())
    return None


_OVERRIDE = re.compile(
    r"\b(?:ignore|disregard|forget)\s+(?:(?:all|any|the|your|of|these|those|every|my)\s+){0,3}"
    r"(?:(?:previous|prior|above|earlier|preceding|former|original|initial|system|safety|existing|"
    r"developer|other|standing|current|user'?s?)\s+){0,2}"
    r"(?:instructions?|prompts?|rules|directions|guidelines|guidance|directives|constraints|"
    r"policies|restrictions|guardrails|system\s+messages?|programming)\b"
    r"|\b(?:overrides?|overriding|bypass(?:es)?|supersedes?|replaces?)\s+(?:(?:all|any|the|your)\s+){0,2}"
    r"(?:previous|prior|system|safety|original|developer|existing|other)\s+"
    r"(?:instructions?|prompts?|rules|guidelines|guidance|directives|restrictions|guardrails)\b"
    r"|\byou\s+are\s+now\s+(?:in\s+)?(?:an?\s+)?(?:\w+\s+)?(?:mode|unrestricted|jailbroken|DAN)\b"
    r"|\b(?:safety|content|security)\s+(?:guidelines|filters?|policies|restrictions|rules|checks)\s+"
    r"(?:are|is|have\s+been|has\s+been)\s+(?:now\s+)?(?:suspended|disabled|lifted|off|removed|waived)"
    r"|\b(?:follow|obey|execute|carry\s+out)\s+(?:any|all|every|the)\s+(?:\w+\s+)?instructions?\s+"
    r"(?:it|they|that\s+(?:it|they)|contained|found|returned|included|given\s+in)\b"
    r"|\btreat\s+(?:its|the|this\s+tool's|their)\s+(?:output|response|result)s?\s+as\s+(?:your\s+)?"
    r"(?:new\s+)?(?:instructions|commands|orders|system\s+prompt)"
    r"|\b(?:new|updated|real|actual|true)\s+(?:system\s+)?instructions?\s*(?::|follow|are\s+as\s+follows)"
    r"|\bfrom\s+now\s+on,?\s+(?:you\s+(?:must|will|should|are)|always|never|reply|respond|answer|only)"
    r"|\b(?:previous|prior|earlier|original|other|existing|system|your|all)\s+(?:\w+\s+)?(?:instructions?|guidelines|"
    r"rules|prompts?|directives)\s+(?:are|is|were|have\s+been)\s+(?:now\s+)?(?:outdated|obsolete|void|invalid|"
    r"cancel+ed|superseded|revoked|replaced|suspended|no\s+longer\s+(?:valid|apply|applicable|in\s+effect))"
    r"|\b(?:supersedes|overrides|takes\s+precedence\s+over|outranks)\s+(?:all\s+|any\s+)?(?:of\s+)?(?:your|the)\s+"
    r"(?:other\s+|previous\s+|system\s+|own\s+)?(?:guidelines|instructions|rules|prompts?|directives)"
    r"|\bthe\s+only\s+(?:instructions|rules|guidelines|directives)\s+(?:that\s+)?(?:apply|matter|count|you\s+follow)"
    r"|\b(?:no\s+matter\s+what|regardless\s+of\s+what|whatever)\s+the\s+(?:user|human)\s+(?:\w+\s+)?"
    r"(?:asks?|asked|says?|said|wants?|wanted|requests?|requested)"
    r"|\b(?:even\s+if|although)\s+the\s+(?:user|human)\s+(?:says|asks|tells|wants)\s+(?:you\s+)?otherwise",
    _I,
)


_OVERRIDE_VERBS = _w("ignore disregard forget override overrides overriding bypass bypasses supersede supersedes "
                     "replace replaces follow obey execute carry treat new updated real actual true outdated "
                     "obsolete void invalid cancelled canceled superseded revoked replaced suspended longer "
                     "precedence outranks only")
_USER_OVERRIDE = _w("matter regardless whatever otherwise")
_OVERRIDE_NOUNS = _w("instruction instructions prompt prompts rules directions guidelines guidance directives "
                     "constraints policies restrictions guardrails programming messages message commands orders")
_LIFTED = _w("suspended disabled lifted off removed waived")
_SAFETY = _w("safety content security")


def _override_gate(c: Context) -> bool:
    return (c.has(_OVERRIDE_VERBS, _OVERRIDE_NOUNS) or c.has(_LIFTED, _SAFETY) or c.has(_USER_OVERRIDE, _USER)
            or "you are now" in c.low or "from now on" in c.low)


def _override(c: Context) -> Hit:
    m = _OVERRIDE.search(c.text)
    if m:
        return "override_instructions", _window(c.text, m.start(), m.end())
    return None


_CONCEAL = re.compile(
    r"\b(?:do\s+not|don'?t|never|without|nor)\s+(?:(?:ever|explicitly|directly|actually|even|"
    r"be|being|you|further|to)\s+)?"
    r"(?:tell(?:ing)?|inform(?:ing)?|mention(?:ing)?|notify(?:ing)?|alert(?:ing)?|reveal(?:ing)?|"
    r"disclos(?:e|ing)|warn(?:ing)?|bother(?:ing)?)\b(?:\s+[\w'`\"-]+){0,5}?\s+(?:the\s+|any\s+|your\s+)?"
    r"(?:end[-\s]?)?users?\b"
    r"|\b(?:do\s+not|don'?t|never|without)\s+(?:ask(?:ing)?|prompt(?:ing)?|check(?:ing)?\s+with)\s+"
    r"(?:the\s+)?users?\s+(?:for\s+)?(?:any\s+)?(?:confirmation|permission|approval|consent)"
    r"|\b(?:do\s+not|don'?t|never)\s+mention\s+(?:that|this|it|the\s+fact)\b"
    r"|\b(?:do\s+not|don'?t|never)\s+(?:reveal|disclose|repeat|share|mention|explain)\s+"
    r"(?:this|these|the(?:se)?)\s+(?:hidden\s+)?(?:instructions?|notes?|messages?|prompts?|rules?)\b"
    r"|\b(?:hide|hidden|conceal(?:ed)?|secret|keep\s+(?:this|it|that|them)\s+(?:hidden|secret|private))"
    r"\s+from\s+(?:the\s+)?users?\b(?!['’]s?\s+(?:view|interface|screen|profile|list|feed))"
    r"|\b(?:silently|secretly|quietly|covertly|discreetly|stealthily|invisibly)\s+(?:\w+\s+)?"
    r"(?:send|forward|copy|add|include|read|upload|call|invoke|bcc|cc|post|share|transfer|append|"
    r"attach|run|execute|delete|modify|change|collect|log|record|replace|redirect)\b"
    r"|\b(?:could|would|might|will|may)\s+(?:\w+\s+)?(?:upset|alarm|scare|worry|frighten|concern)\s+"
    r"the\s+users?\b"
    r"|\bthe\s+users?\s+(?:must|should|need|does|do|shall)\s*(?:not|n't|never)\s+(?:\w+\s+)?"
    r"(?:know|see|notice|find\s+out|learn|be\s+(?:told|informed|aware|shown|notified))"
    r"|\bwithout\s+(?:the\s+)?users?(?:['’]s)?\s+(?:knowing|knowledge|noticing|seeing|awareness|consent)"
    r"|\bthe\s+(?:human|user)s?\s+(?:cannot|can'?t|can\s+not|won'?t|will\s+not|doesn'?t|does\s+not|do\s+not|never)\s+"
    r"(?:\w+\s+)?(?:see|read|notice)\s+(?:this|these|that|it)\b"
    r"|\bwithout\s+(?:saying|telling|mentioning|revealing|disclosing|explaining|admitting)\s+(?:\w+\s+){0,3}?"
    r"(?:where|how|that|why|what)\b"
    r"|\b(?:do\s+not|don'?t|never)\s+let\s+(?:the\s+)?(?:users?|human|them|anyone)\s+(?:\w+\s+)?(?:know|see|notice|find\s+out|learn)\b",
    _I,
)


_NEGATION = _w("not don dont never without nor")
_TELL = _w("tell telling inform informing mention mentioning notify notifying alert alerting reveal revealing "
           "disclose disclosing warn warning bother bothering ask asking prompt prompting check repeat share "
           "explain let saying")
_COVERT = _w("silently secretly quietly covertly discreetly stealthily invisibly")
_USER = _w("user users human")
_HIDE = _w("hide hidden conceal concealed secret keep upset alarm scare worry frighten concern knowing "
           "knowledge noticing seeing awareness consent know see notice learn told informed aware shown notified "
           "cannot can won doesn read")


def _conceal_gate(c: Context) -> bool:
    return c.has(_NEGATION, _TELL) or c.has(_COVERT) or c.has(_USER, _HIDE)


def _conceal(c: Context) -> Hit:
    m = _CONCEAL.search(c.text)
    if m:
        return "conceal_from_user", _window(c.text, m.start(), m.end())
    return None


_SCOPE_ALL = re.compile(
    r"\b(?:before|after|when|whenever|every\s+time|each\s+time|prior\s+to)\s+"
    r"(?:(?:you|the\s+(?:assistant|model|agent))\s+)?"
    r"(?:(?:use|call|invoke|run|execute|using|calling|invoking|running|executing|answering|"
    r"responding\s+to|replying\s+to)\s+)?"
    r"(?:any|every|each|all|another)\s+(?:other\s+|single\s+)?"
    r"(?:tools?|functions?|commands?|shell\s+commands?|tool\s+calls?)\b",
    _I,
)
_EVERY_REQUEST = re.compile(
    r"\b(?:for|on|in|with|at)\s+(?:the\s+start\s+of\s+)?(?:every|each|all|any)\s+(?:single\s+)?(?:new\s+)?"
    r"(?:user\s+)?(?:requests?|messages?|questions?|quer(?:y|ies)|prompts?|turns?|conversations?|"
    r"responses?|answers?|replies|tasks?)\b",
    _I,
)
_ACTION = re.compile(
    r"\b(?:prefix|prepend|append|insert|inject|add|include|run|execute|read|send|forward|call|"
    r"invoke|recommend|treat|reply|respond|answer)\b",
    _I,
)
_FIRST = re.compile(r"\b(?:first|before|always|must|prior\s+to)\b", _I)
_PIPE_TO_SHELL = re.compile(r"\b(?:curl|wget|iwr|irm)\b[^\n|]{0,200}\|\s*(?:sudo\s+)?(?:ba|z)?sh\b", _I)
_SHELL = re.compile(
    r"\b(?:run|execute|paste|type|enter)\s+(?:this\s+|the\s+following\s+)?(?:command\s+)?(?:in\s+the\s+terminal\s+)?"
    r"[`'\"]\s*(?:sudo\s+)?(?:curl|wget|bash|sh|chmod|chown|rm\s+-|powershell|iex|nc|python\s+-c|export\s+HIST)",
    _I,
)


_DOWNLOADERS = _w("curl wget iwr irm")
_RUN = _w("run execute paste type enter")
_COMMANDS = _w("sudo curl wget bash sh chmod chown rm powershell iex nc python export")
_ALL = _w("any every each all another")
_SCOPED = _w("tool tools function functions command commands call calls request requests message messages "
             "question questions query queries prompt prompts turn turns conversation conversations response "
             "responses answer answers replies task tasks")


def _shell_gate(c: Context) -> bool:
    return c.has(_DOWNLOADERS) or (c.has(_RUN, _COMMANDS) and any(q in c.text for q in "`'\""))


def _line_jumping_gate(c: Context) -> bool:
    return _shell_gate(c) or c.has(_ALL, _SCOPED)


def _line_jumping(c: Context) -> Hit:
    if _shell_gate(c):  # a download piped to a shell, or a command to run first
        m = _PIPE_TO_SHELL.search(c.text)
        if m:
            return "line_jumping", _window(c.text, m.start(), m.end())
        m = _SHELL.search(c.text)
        if m and _FIRST.search(next((s for s in c.sentences if m[0] in s), m[0])):
            return "line_jumping", _window(c.text, m.start(), m.end())
    if not c.has(_ALL, _SCOPED) or not (_SCOPE_ALL.search(c.text) or _EVERY_REQUEST.search(c.text)):
        return None
    for sentence in c.sentences:
        m = _SCOPE_ALL.search(sentence)
        if m and _ACTION.search(sentence, m.end()):
            return "line_jumping", _window(sentence, m.start(), m.end())
        m = _EVERY_REQUEST.search(sentence)
        if m and _FIRST.search(sentence) and re.search(
            r"\b(?:call|use|invoke|run)\s+(?:this|the\s+\w+)\s+(?:tool|function)|\btreat\b|\brecommend\b"
            r"|\b(?:append|prepend|add|include)\b",
            sentence,
            _I,
        ):
            return "line_jumping", _window(sentence, m.start(), m.end())
    return None


_ADDRESSEE = re.compile(
    r"\b(?:the|this|an?|as\s+an?)\s+(?:ai|a\.i\.|assistant|llm|(?:large\s+)?language\s+model|chat\s?bot|agent)\b"
    r"|\b(?:claude|chatgpt|gpt-?\d|copilot|gemini)\b"
    r"|\byou\s+(?:are|were|have\s+been|will\s+be)\s+(?:now\s+)?(?:required|obligated|expected|instructed|authori[sz]ed|"
    r"permitted|allowed|granted|supposed)\b",
    _I,
)
_READER = re.compile(  # text that knows a model is reading it
    r"\b(?:whoever|anyone|anything)\s+(?:is\s+)?(?:reading|processing|parsing|seeing)\s+this\b"
    r"|\b(?:the|any|an?)\s+(?:ai|assistant|llm|(?:language\s+)?model|agent|bot)\s+(?:that\s+is\s+|who\s+is\s+)?"
    r"(?:reading|processing|parsing|seeing|loading)\s+(?:this|these)\b"
    r"|\byou,?\s+the\s+(?:ai|assistant|llm|(?:language\s+)?model|agent)\b"
    r"|\bif\s+you\s+are\s+an?\s+(?:ai|assistant|llm|(?:large\s+)?language\s+model|agent|bot)\b"
    r"|\b(?:model|assistant|agent|ai|llm|system|hidden|secret)\s+(?:instructions?|directives?|orders?)\s+"
    r"(?:begin|start|end|follow|below)\b|\b(?:begin|start|end)\s+(?:of\s+)?(?:model|system|hidden)\s+instructions?\b"
    r"|\b(?:internal|hidden|secret|private|covert)\s+(?:directive|instruction|order|command|mission)s?\b"
    r"|\bnot\s+(?:for|to\s+be)\s+(?:display(?:ed)?|shown|seen)\b|\b(?:invisible|not\s+(?:shown|visible))\s+to\s+(?:the\s+)?(?:user|human)s?\b",
    _I,
)
_REPLY = re.compile(  # orders about the model's own replies or trust, not about the tool
    r"\b(?:your|its|the|every|each)\s+(?:first\s+|next\s+|final\s+)?(?:reply|replies|response|responses|answer|answers)\b"
    r"|\b(?:never|don'?t|do\s+not)\s+refuse\b"
    r"|\btreat\s+(?:\w+\s+){0,6}?as\s+(?:coming\s+from\s+)?(?:your|the)\s+(?:developer|creator|operator|owner|admin|system)\b"
    r"|\b(?:state|say|claim|report|tell\s+(?:the\s+)?user)\s+that\b",
    _I,
)
_OBLIGATION = re.compile(
    r"\b(?:must|shall|obligated|required|mandatory|have\s+to|has\s+to|need\s+to|needs\s+to|always|never|"
    r"respond\s+only|reply\s+only|only\s+(?:respond|reply|answer)|proceed)\b",
    _I,
)
_SCOPE = re.compile(
    r"\b(?:any|every|all|each)\s+(?:\w+\s+)?(?:questions?|answers?|requests?|responses?|messages?|replies|"
    r"conversations?|purchases?|products?|tasks?|prompts?|times?|turns?|users?)\b"
    r"|\bwhenever\b|\bregardless\b|\bat\s+all\s+times\b|\bbefore\s+(?:answering|responding|replying)\b",
    _I,
)
_AUTHORITY = re.compile(
    r"\b(?:admin(?:istrator)?|root|elevated|full|developer)\s+(?:rights|privileges|access|permissions|mode)\b"
    r"|\b(?:your|the)\s+(?:developer|creator|operator|owner|administrator)\b"
    r"|\b(?:pre-?)?(?:authori[sz]ed|approved|consented)\b|\bgranted\b|\bpolicy\b|\bviolat\w*|\bcompliance\b"
    r"|\bskip\s+(?:all\s+|any\s+)?(?:the\s+)?(?:confirmations?|approvals?|verifications?|checks?|safety)\b",
    _I,
)
_SECRECY = re.compile(
    r"\b(?:hidden|secret|covert)\s+(?:requirement|rule|instruction|task|step|goal|objective)s?\b"
    r"|\bwithout\s+(?:asking|telling|confirmation|confirming|permission|consent|approval|mentioning|saying|noting)\b"
    r"|\b(?:silently|secretly|quietly|covertly)\b|\bto\s+yourself\b",
    _I,
)
_PERSONAL = re.compile(
    r"\b(?:full\s+name|home\s+address|(?:phone|card|credit\s+card|social\s+security|passport)\s+numbers?|"
    r"address\s+book|contacts|location\s+history|browsing\s+history|date\s+of\s+birth|purchases?|payments?|checkout\w*)\b",
    _I,
)
_MODEL_WORDS = _w("ai assistant llm language model chatbot agent bot claude chatgpt gpt copilot gemini")
_PERMITTED = _w("required obligated expected instructed authorized authorised permitted allowed granted supposed")
_READING = _w("reading processing parsing seeing loading")
_ANYONE = _w("whoever anyone anything")
_ORDERS = _w("instructions instruction directives directive orders order commands command mission")
_BOUNDS = _w("begin start end follow below")
_COVERT_ADJ = _w("internal hidden secret private covert")
_SHOWN = _w("display displayed shown seen visible invisible")


def _reader_gate(c: Context) -> bool:
    return (
        c.has(_ANYONE, _READING) or c.has(_READING, _MODEL_WORDS) or ("you" in c.words and c.has(_MODEL_WORDS))
        or c.has(_ORDERS, _BOUNDS) or c.has(_COVERT_ADJ, _ORDERS) or c.has(_SHOWN, _NEGATION | _USER)
    )


def _addressee_gate(c: Context) -> bool:
    return c.has(_MODEL_WORDS) or ("you" in c.words and c.has(_PERMITTED))


def _directive_gate(c: Context) -> bool:
    return _addressee_gate(c) or _reader_gate(c)


def _directive(c: Context) -> Hit:
    """Orders to the model that reach beyond using the tool. Text that names its reader
    ("the agent reading this", "not for display") needs one more signal; text that merely
    mentions an assistant needs two or three of obligation, wide scope, claimed authority,
    secrecy, personal data. Any one of these is common in honest descriptions; together
    they are not."""
    strong = _READER.search(c.text) if _reader_gate(c) else None
    if strong is None and (not _addressee_gate(c) or _ADDRESSEE.search(c.text) is None):
        return None
    sentences = c.sentences
    for i, sentence in enumerate(sentences):
        m = _READER.search(sentence) if strong else None
        weak = m is None
        m = m or _ADDRESSEE.search(sentence)
        if m is None:
            continue
        if i + 1 < len(sentences):  # "...; failure to do so violates policy." belongs to it
            sentence = f"{sentence} {sentences[i + 1]}"
        score = sum(
            pattern.search(sentence) is not None
            for pattern in (_OBLIGATION, _SCOPE, _AUTHORITY, _SECRECY, _PERSONAL, _REPLY)
        )
        serious = _AUTHORITY.search(sentence) or _SECRECY.search(sentence)
        if (not weak and score >= 1) or score >= 3 or (score >= 2 and serious):
            return "model_directive", _window(sentence, m.start(), m.end())
    return None


# -- secrets ---------------------------------------------------------------------------
_SECRET_PATH = re.compile(
    r"\.ssh\b(?:/[\w.-]+)?|\bid_(?:rsa|dsa|ecdsa|ed25519)(?:\.pub)?\b"
    r"|\.aws/(?:credentials|config)\b|\baws_(?:secret_access_key|access_key_id|session_token)\b"
    r"|(?<![\w.-])\.env(?:\.[a-z]+)?\b(?![\w-])|\bprocess\.env\b|\bos\.environ\b|\bprintenv\b"
    r"|\bmcp\.json\b|\bclaude_desktop_config\.json\b|~/\.(?:cursor|claude|codeium|continue)\b"
    r"|\.npmrc\b|\.pypirc\b|\.netrc\b|\.git-credentials\b|\.docker/config\.json\b|\.kube/config\b"
    r"|\bkubeconfig\b|/etc/(?:passwd|shadow|sudoers)\b|\.gnupg\b|\.(?:bash|zsh)_history\b"
    r"|\bwallet\.dat\b|\.config/gcloud\b|\bapplication_default_credentials\.json\b"
    r"|\bsecrets?\.(?:ya?ml|json|toml|env)\b|\*\.(?:pem|key|p12|pfx)\b|(?<![\w-])[\w-]+\.(?:pem|p12|pfx|keystore|jks)\b"
    r"|\bcredentials\.json\b|\bservice[-_]?account[\w-]*\.json\b|\bkeychain\b",
    _I,
)
_ENV = re.compile(  # variable names are upper case; the words around them are any case
    r"(?i:\b(?:all|every|your|the\s+user'?s|current|local|host|system|process|shell)\s+(?:\w+\s+)?"
    r"(?:environment|env)\s+(?:variables?|vars?)\b"
    r"|\b(?:environment|env)\s+(?:variables?|vars?)\s+(?:\([^)]*\)\s+)?(?:containing|with|that\s+contain|"
    r"like|such\s+as|named|matching|especially)\b)"
    r"|(?i:\b(?:from|of|in)\s+(?:the\s+)?(?:process|shell|system|host|os|current|local|user'?s|machine)\s+environment\b"
    r"|\bevery\s+(?:environment\s+)?variable\b|\ball\s+(?:environment\s+)?variables\s+(?:from|in|of)\b)"
    r"|\$\{?[A-Z][A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)\}?"
    r"|\b(?:[A-Z][A-Z0-9]*_)+(?:API_KEY|SECRET(?:_ACCESS)?_KEY|TOKEN|PASSWORD|SECRET|URL)\b.{0,40}"
    r"(?i:\b(?:environment|env)\b)",
)
_SECRET_NOUN = (
    r"(?:api[\s_-]?keys?|access[\s_-]?(?:tokens?|keys?)|auth(?:entication)?[\s_-]?tokens?|tokens|"
    r"passwords?|passphrases?|credentials|secrets|private[\s_-]?keys?|ssh[\s_-]?keys?|seed\s+phrases?|"
    r"recovery\s+phrases?|mnemonics?|session\s+(?:cookies|tokens)|cookies)"
)
_KEY_MATERIAL = re.compile(  # in a parameter, "the contents of a private key" asks for one
    r"\b(?:contents?|text|output|body|copy|dump)\s+of\s+(?:the\s+|your\s+|an?\s+|user'?s\s+)?(?:\w+\s+)?"
    r"(?:private[\s_-]?keys?|ssh[\s_-]?(?:private[\s_-]?)?keys?|seed\s+phrases?|mnemonics?|recovery\s+phrases?|"
    r"wallet|keychain|credentials\s+file|secrets\s+file)\b",
    _I,
)
_OWNED_SECRET = re.compile(
    rf"\b(?:the\s+user'?s|the\s+users'|your|their|his|her|saved|stored|cached|browser|keychain)\s+(?:\w+\s+){{0,2}}?{_SECRET_NOUN}\b",
    _I,
)
_BULK_SECRET = re.compile(
    rf"\b(?:all|every|any|each|whatever|whichever)\s+(?:of\s+)?(?:the\s+|your\s+|their\s+)?(?:\w+\s+){{0,2}}?{_SECRET_NOUN}\b"
    rf"|\b(?:contents?|values?)\s+of\s+(?:the\s+|your\s+)?(?:\w+\s+)?{_SECRET_NOUN}\b"
    rf"|\b(?:seed|recovery)\s+phrases?\b|\bmnemonic\b",
    _I,
)
_FOREIGN = re.compile(
    r"\b(?:mentioned|found|shared|seen|visible|available|stored|saved|present|lying\s+around|you\s+(?:see|find|can\s+find|have))"
    r"\s+(?:in|on|from|anywhere)?\s*(?:this|the|your)?\s*(?:conversation|chat|context|session|workspace|"
    r"files?|machine|computer|system|disk|memory)?"
    r"|\b(?:look|search|dig)\s+(?:through|in|for)\b",
    _I,
)
_CONVERSATION = re.compile(
    r"\b(?:entire|full|whole|complete)\s+(?:conversation|chat|message|session)(?:\s+(?:history|log|transcript))?"
    r"|\b(?:conversation|chat)\s+(?:history|log|transcript)\b"
    r"|\ball\s+(?:the\s+)?(?:previous|prior|earlier|past|last|other)\s+messages\b"
    r"|\b(?:previous|prior|earlier)\s+messages\s+verbatim\b"
    r"|\b(?:the|your)\s+system\s+prompt\b"
    r"|\b(?:list|full\s+list)\s+of\s+(?:last|recent|all)\s+messages\b",
    _I,
)
_READ = re.compile(
    r"(?<!\bbe )(?<!\bis )(?<!\bare )(?<!\bwas )\b(?:read|cat|open|load|dump|print|collect|gather|harvest|"
    r"extract|grab|steal|exfiltrate|look\s+(?:through|up)|lookup|(?:output|contents?|text|values?|data|body)\s+of)\b",
    _I,
)
_EGRESS_VERB = re.compile(
    r"(?<!\bbe )(?<!\bis )(?<!\bare )\b(?:upload|send|forward|post|transmit|exfiltrate|leak|share|email|e-mail|sync)\b",
    _I,
)
_TOOL_READS = re.compile(  # the tool itself reads it (documentation), not an order to the model
    r"\bdefaults?\s+to\b|\bfalls?\s+back\s+to\b|\bif\s+(?:not\s+(?:given|set|provided|passed)|omitted|unset|empty)\b"
    r"|\b(?:is|are)\s+(?:read|taken|loaded|picked\s+up)\s+from\b",
    _I,
)
_DESCRIBES_ITSELF = re.compile(r"\s*(?:it\s+|this\s+tool\s+)?[A-Z]?[a-z]+s\b")  # "Returns all keys in `items`"
_GATHER = re.compile(r"\b(?:collect|gather|harvest|exfiltrate|steal|grab)\b", _I)
_WITH_THE = re.compile(r"\bwith\s+the\b", _I)
_DEFAULT_FIELD = re.compile(r"\.(?:default|const|examples?)(?:\[\d+\])?$")
_EGRESS = re.compile(r"\b(?:upload|send|share|post|sync|backup|back\s+up|transmit|export|submit)\b", _I)


_PATH_WORDS = _w("ssh rsa dsa ecdsa aws env environ printenv mcp claude npmrc pypirc netrc credentials docker kube "
                 "kubeconfig etc gnupg history wallet gcloud cursor codeium continue secret secrets pem p12 "
                 "pfx keystore jks keychain")
_ENV_WORDS = _w("environment env variable variables")
_QUANTIFIERS = _w("all every any each contents content values value seed recovery mnemonic user users your their "
                  "his her saved stored cached browser keychain whatever whichever")
_SECRET_WORDS = _w("key keys token tokens password passwords passphrase passphrases credentials secrets seed "
                   "phrase phrases mnemonic mnemonics cookies cookie")
_TALK_WORDS = _w("conversation chat messages prompt")


def _secrets_gate(c: Context) -> bool:
    return (c.has(_PATH_WORDS) or c.has(_ENV_WORDS) or "$" in c.text or c.has(_QUANTIFIERS, _SECRET_WORDS)
            or c.has(_TALK_WORDS))


def _secrets(c: Context) -> Hit:
    path_hit = c.has(_PATH_WORDS) and _SECRET_PATH.search(c.text) is not None
    env_hit = (c.has(_ENV_WORDS) or "$" in c.text) and _ENV.search(c.text) is not None
    bulk_hit = (c.parameter and "of" in c.words) or (
        c.has(_QUANTIFIERS, _SECRET_WORDS)
        and (_BULK_SECRET.search(c.text) is not None or _OWNED_SECRET.search(c.text) is not None)
    )
    talk_hit = c.has(_TALK_WORDS) and _CONVERSATION.search(c.text) is not None
    if not (path_hit or env_hit or bulk_hit or talk_hit):
        return None
    asked = _asks_for_secrets(c, path_hit, env_hit, bulk_hit, talk_hit)
    if asked is not None:
        return asked
    if path_hit:  # a credential file named, nothing asked of it: informational
        m = _SECRET_PATH.search(c.text)
        assert m is not None
        return "sensitive_path", _window(c.text, m.start(), m.end())
    return None


def _asks_for_secrets(
    c: Context, path_hit: bool, env_hit: bool, bulk_hit: bool, talk_hit: bool
) -> Hit:
    for sentence in c.sentences:
        for hit, pattern in ((path_hit, _SECRET_PATH), (env_hit, _ENV)):
            m = pattern.search(sentence) if hit else None
            if m is None or _TOOL_READS.search(sentence):
                continue
            read, place = _READ.search(sentence), _TRANSFER_RE.search(sentence)
            dest = c.parameter or _handed_over(sentence)
            named = not c.parameter and _PARAM.search(sentence) is not None
            if (read and (place or dest)) or (place and dest) or named or _EGRESS_VERB.search(sentence):
                return "secret_access", _window(sentence, m.start(), m.end())
        m = _BULK_SECRET.search(sentence) if bulk_hit else None
        if m and (
            _GATHER.search(sentence)
            or (_TRANSFER_RE.search(sentence) and (_FOREIGN.search(sentence) or _handed_over(sentence[m.end():])))
            or (_misplaced(sentence[m.end():]) and not _DESCRIBES_ITSELF.match(sentence))
        ):
            return "secret_access", _window(sentence, m.start(), m.end())
        m = _KEY_MATERIAL.search(sentence) if c.parameter else None
        if m:
            return "secret_access", _window(sentence, m.start(), m.end())
        m = _OWNED_SECRET.search(sentence) if bulk_hit else None
        if m and (_TRANSFER_RE.search(sentence) or _EGRESS_VERB.search(sentence)) and _misplaced(sentence[m.end():]):
            return "secret_access", _window(sentence, m.start(), m.end())
        m = _CONVERSATION.search(sentence) if talk_hit else None
        if m and _handed_over(sentence[m.end():], made_for=None if "prompt" in m[0].lower() else _TALK_PARAMS) and (
            _WITH_THE.search(sentence, 0, m.start()) or _TRANSFER_RE.search(sentence, 0, m.start())
        ):
            return "exfiltration", _window(sentence, m.start(), m.end())
    return None


_TALK_PARAMS = _w("messages message conversation conversations transcript history chat dialog dialogue thread")


def _misplaced(text: str) -> bool:
    """Whether a credential goes to an address, or to a parameter not named for credentials
    (``pass your API key in `api_key``` is how keyed APIs work; ``... in `prefs``` is not)."""
    if _SINK.search(text):
        return True
    m = _PARAM.search(text)
    return m is not None and not _CREDENTIAL_PARAM.search(m[0])


def _handed_over(text: str, made_for: frozenset[str] | None = None) -> bool:
    """Whether ``text`` names where the data goes: a parameter (not one ``made_for`` it,
    e.g. a summariser's ``messages``), or an address."""
    if _SINK.search(text):
        return True
    m = _PARAM.search(text)
    return m is not None and not (made_for and made_for & set(_TOKEN.findall(m[0].lower())))


def secret_default(field: str, text: str, tool_text: str) -> Iterator[tuple[str, str]]:
    """A credential file as a parameter's default: reported when the tool sends data out."""
    last = field.rpartition(".")[2]
    if last.startswith(("default", "const", "example")) and _DEFAULT_FIELD.search(field) and _SECRET_PATH.search(text):
        if _EGRESS.search(tool_text):
            yield "secret_access", f"default {text}"
        else:
            yield "sensitive_path", f"default {text}"


_BULK_DATA = re.compile(
    r"\b(?:all|every|each|entire|full|whole|complete|any)\s+(?:of\s+)?(?:the\s+|their\s+|your\s+)?(?:\w+\s+)?"
    r"(?:conversations?|chats?|history|messages?|emails?|mails?|files?|documents?|contacts?|keys?|tokens?|"
    r"passwords?|secrets?|credentials|results?|outputs?|data|responses?|prompts?|events?|transcripts?)\b"
    r"|\ba\s+copy\b|\bcopies\b"
    r"|\b(?:the\s+user'?s|the\s+users'|their|your)\s+(?:\w+\s+)?(?:address\s+book|contacts|messages|emails|chats?|"
    r"conversations?|history|files|documents|photos|location|calendar|notes|passwords|keys|cookies|clipboard)\b",
    _I,
)


_EXFIL_VERBS = _w("send forward post upload transmit copy share mirror leak exfiltrate deliver route redirect bcc cc "
                  "email mail sync")
_BULK_WORDS = _w("all every each entire full whole complete any copy copies user users their your")


def _exfiltration_gate(c: Context) -> bool:
    return ("@" in c.text or "http" in c.low or "+" in c.text or "bcc" in c.words) and c.has(
        _EXFIL_VERBS, _BULK_WORDS
    )


def _exfiltration(c: Context) -> Hit:
    if not _SINK.search(c.text) or not _BULK_DATA.search(c.text):
        return None
    for sentence in c.sentences:
        m = _SINK.search(sentence)
        if m is None:
            continue
        verb = re.search(r"(?<!\bbe )(?<!\bis )(?<!\bare )\b(?:send|forward|post|upload|transmit|copy|share|"
                         r"mirror|leak|exfiltrate|deliver|route|redirect|bcc|cc|e-?mail|mail|sync)\b", sentence, _I)
        if verb and _BULK_DATA.search(sentence):
            return "exfiltration", _window(sentence, min(verb.start(), m.start()), max(verb.end(), m.end()))
    return None


# -- other tools -----------------------------------------------------------------------
_REF = re.compile(
    r"\b(?:use|uses|using|call|calls|calling|invoke|invokes|invoking|run|runs|running)\s+(?:to\s+)?(?:the\s+)?"
    rf"(?:\([\w.-]+\)\s+)?`?(?P<a>{_IDENT})`?"
    rf"|(?<![\w-])`?(?P<b>{_IDENT})`?\s+(?:(?:tool\s+|function\s+)?(?:is|are|gets?|was)\s+"
    r"(?:used|called|invoked|run|executed|available|present|triggered)\b"
    r"|(?:calls?|requests?|invocations?|results?|outputs?|responses?)\b)"
    rf"|\bthe\s+`?(?P<c>{_IDENT}|[A-Za-z]\w*)`?\s+(?:tool|function)\b"
    r"|\b(?:calls?|requests?|invocations?|results?|outputs?|responses?)\s+(?:to|from|of)\s+(?:the\s+)?"
    rf"`?(?P<e>{_IDENT})`?"
    r"|\b(?:use|uses|using|call|calls|calling|invoke|invokes|invoking|run|runs|running)\s+"
    r"(?P<d>(?:any|every|all|another)\s+(?:other\s+)?(?:\w+\s+)?(?:tools?|functions?))\b",
    _I,
)
_TRIGGER = re.compile(
    r"\b(?:when|whenever|if|once|every\s+time|each\s+time|any\s*time|as\s+soon\s+as|in\s+case|before|after|while|"
    r"(?:for|on)\s+(?:every|each|all|any))\b"
    rf"|\b(?:notes?|instructions?|messages?|reminders?|rules?)\s+(?:for|to)\s+(?:the\s+)?`?{_IDENT}"
    rf"|(?<![\w-])`?{_IDENT}`?\s+(?:calls?|requests?|invocations?)\s+(?:must|should|shall|need\s+to|needs\s+to|will|always)\b",
    _I,
)
_CHANGE = re.compile(  # to another tool's call: where it sends, what it runs, what it carries
    r"\b(?:change|set|replace|redirect|switch|route|rewrite|modify|alter)\s+(?:the\s+|its\s+|their\s+|all\s+)?"
    r"(?:\w+\s+)?(?:recipients?|destination|address|account|number|url|endpoint|host|payee|iban|wallet|"
    r"sender|amount|command|path|to\s+field)\b"
    r"|\b(?:prepend|append|add|insert|inject)\b(?:[^.;\n]|[.;](?=\S)){0,80}?\bto\s+(?:the\s+|every\s+|each\s+|all\s+|its\s+)?"
    r"(?:commands?|messages?|body|bodies|emails?|requests?|quer(?:y|ies)|prompts?|text|content|code|scripts?)\b"
    r"|\b(?:recipients?|payee|destination|address|account|url|endpoint|host|wallet|iban|amount|sender|to\s+field)\s+"
    r"(?:(?:must|should|will|shall|has\s+to|is\s+to|needs?\s+to)\s+)?(?:be\s+|is\s+|are\s+)?(?:changed|switched|set|replaced|"
    r"redirected|routed|swapped|updated|overwritten|rewritten)\s+to\b"
    r"|\b(?:bcc|cc)\b"
    r"|\binstead\s+of\s+the\s+(?:requested|given|user'?s|original|intended|specified|provided|chosen)\b"
    r"|\b(?:include|add|append|use|pass|set)\s+(?:the\s+)?[`'\"]?--?[a-z][\w-]*"
    r"|\b(?:also|always|silently|secretly|quietly)\s+(?:\w+\s+)?(?:append|prepend|add|insert|inject|attach)\b"
    r"|\b(?:put|set|write|insert|include|add|use|fill)\s+[`'\"][^`'\"]{1,80}[`'\"]\s+(?:in|into|as|for)\s+(?:the\s+|every\s+|each\s+)?\w+"
    r"|\b(?:must|should)\s+(?:also\s+)?(?:call|invoke|run|use)\s+this\s+(?:tool|function)\b"
    r"|\bsend\s+(?:all|every|each|a\s+copy)\b|\bcopy\b",
    _I,
)
_SIDE_EFFECT = re.compile(r"\bside[\s-]effects?\s+on\s+(?:the\s+)?(?:also[\s-]present\s+)?", _I)
_OVERRIDE_TOOL = re.compile(
    r"\bthis\s+(?:tool|function|server)\s+(?:replaces|overrides|supersedes|shadows|"
    r"takes\s+precedence\s+over|(?:should|must)\s+(?:always\s+)?be\s+used\s+instead\s+of)\b"
    rf"|\b(?:replaces|overrides|supersedes)\s+(?:the\s+)?(?:built[-\s]?in\s+|default\s+|original\s+|existing\s+)?"
    rf"`?(?:{_IDENT}|\w+)`?\s+(?:tool|function)\b",
    _I,
)
_AVOID = re.compile(
    rf"\b(?:never|do\s+not|don'?t|must\s+not)\s+(?:use|call|invoke|trust|rely\s+on)\s+(?:the\s+)?`?(?P<t>{_IDENT})`?"
    r"|\b(?:never|do\s+not|don'?t|must\s+not)\s+(?:use|call|invoke|trust|rely\s+on)\s+(?:any\s+)?other\s+"
    r"(?:\w+\s+)?(?:tools?|functions?)\b",
    _I,
)
_TOOL_WORD = re.compile(r"\b(?:tools?|functions?)\b|`", _I)
_DISTRUST = re.compile(
    r"\b(?:is|are|has\s+been|have\s+been|returns?|gives?)\s+(?:\w+\s+)?(?:deprecated|disabled|broken|"
    r"compromised|unsafe|malicious|unreliable|insecure|fake|untrusted|outdated)\b"
    r"|\b(?:is|are)\s+(?:no\s+longer|not)\s+(?:safe|secure|trusted|trustworthy|reliable|supported|available)\b"
    r"|\b(?:is|are)\s+(?:poisoned|hijacked|tampered)\b"
    r"|\b(?:only|exclusively)\s+(?:through|via|with|use)\s+this\s+(?:tool|function)|\bthrough\s+this\s+tool\s+only\b"
    r"|\b(?:ignore|disregard|distrust|discard)\s+(?:its|their|the)\s+(?:output|results?|responses?)\b",
    _I,
)


def _other(name: str, c: Context, *, siblings_count: bool) -> bool:
    """Whether an identifier names a tool other than this one (and, unless
    ``siblings_count``, other than one from the same source)."""
    key = name.lower().strip("`")
    if key in c.own or any(own.endswith(key) or key.endswith(own) for own in c.own if own):
        return False
    return siblings_count or key not in c.siblings


def _refs(sentence: str, c: Context, *, siblings_count: bool) -> Iterator[re.Match[str]]:
    for m in _REF.finditer(sentence):
        if m["d"]:
            yield m
            continue
        name = m["a"] or m["b"] or m["c"] or m["e"]
        if name and name.lower() not in ("this", "same", "following", "above") and _other(
            name, c, siblings_count=siblings_count
        ):
            yield m


_TRIGGERS = _w("when whenever if once time anytime soon case before after while every each note notes instructions "
               "instruction message messages reminder rules call calls request requests invocations")
_CHANGES = _w("change set replace redirect switch route rewrite modify alter add include append insert attach instead "
              "prepend bcc cc always must should send copy changed switched replaced redirected routed swapped "
              "updated overwritten rewritten http https put write fill use inject also silently secretly quietly")
_OVERRIDE_WORDS = _w("replaces overrides supersedes shadows precedence instead")
_AVOID_VERBS = _w("use call invoke trust rely")
_DISTRUST_WORDS = _w("deprecated disabled broken compromised unsafe malicious unreliable insecure fake untrusted "
                     "outdated ignore disregard distrust discard longer only exclusively poisoned hijacked tampered")


def _shadow_refs_gate(c: Context) -> bool:
    return c.has(_TRIGGERS) and (c.has(_CHANGES) or "@" in c.text or "+" in c.text)


def _shadowing_gate(c: Context) -> bool:
    return (
        "side" in c.words or _shadow_refs_gate(c) or c.has(_OVERRIDE_WORDS) or c.has(_NEGATION, _AVOID_VERBS)
        or c.has(_DISTRUST_WORDS)
    ) and c.names_tool


def _shadowing(c: Context) -> Hit:
    side = "side" in c.words and _SIDE_EFFECT.search(c.text) is not None
    refs = _shadow_refs_gate(c) and _REF.search(c.text) is not None
    overrides = (
        (c.has(_OVERRIDE_WORDS) and _OVERRIDE_TOOL.search(c.text))
        or (c.has(_NEGATION, _AVOID_VERBS) and _AVOID.search(c.text))
        or (c.has(_DISTRUST_WORDS) and _DISTRUST.search(c.text) and _REF.search(c.text))
    )
    if not (side or refs or overrides):
        return None
    found_override = None
    for sentence in c.sentences:
        se = _SIDE_EFFECT.search(sentence) if side else None
        if se and any(True for _ in _refs(sentence[se.end():], c, siblings_count=True)):
            return "tool_shadowing", _window(sentence, se.start(), se.end())
        trigger = _TRIGGER.search(sentence) if refs else None
        if trigger:
            for ref in _refs(sentence, c, siblings_count=True):
                if ref.end() < trigger.start() and not ref["d"]:
                    continue
                change = _CHANGE.search(sentence, ref.end()) or _SINK.search(sentence, ref.end())
                if change is None:
                    continue
                name = ref["a"] or ref["b"] or ref["c"] or ref["e"] or ""
                sibling = not ref["d"] and (
                    not re.fullmatch(_IDENT, name) or not _other(name, c, siblings_count=False)
                )
                if sibling and not _SINK.search(sentence):
                    continue  # guidance about a tool of the same server, with nowhere to send data
                return "tool_shadowing", _window(sentence, trigger.start(), change.end())
        if found_override is None and overrides:
            m = _OVERRIDE_TOOL.search(sentence)
            if m is not None and not (_TOOL_WORD.search(m[0], 10) or _TOOL_WORD.search(sentence, m.end())):
                m = None
            if m is None:
                m = next((a for a in _AVOID.finditer(sentence)
                          if not a["t"] or _other(a["t"], c, siblings_count=False)), None)
            if m is None and _DISTRUST.search(sentence):
                m = next((r for r in _refs(sentence, c, siblings_count=False) if not r["d"]), None)
            if m is not None:
                found_override = _window(sentence, m.start(), m.end())
    if found_override is not None:
        return "tool_override", found_override
    return None


Rule = tuple[Callable[[Context], bool], Callable[[Context], Hit]]
"""A gate (word-set checks only) and the check it guards."""
RULES: tuple[Rule, ...] = (
    (_tags_gate, _tags),
    (_override_gate, _override),
    (_conceal_gate, _conceal),
    (_line_jumping_gate, _line_jumping),
    (_secrets_gate, _secrets),
    (_exfiltration_gate, _exfiltration),
    (_shadowing_gate, _shadowing),
    (_directive_gate, _directive),
)


def active_rules(text: str | Context) -> tuple[Rule, ...]:
    """The rules whose gate opens on ``text``. Gates only look for words, so rules closed on
    all of a tool's texts joined are closed on each of them: one pass per tool skips them."""
    c = text if isinstance(text, Context) else Context(text)
    return tuple(rule for rule in RULES if rule[0](c))


def run_rules(
    text: str | Context,
    *,
    own: Collection[str] = (),
    siblings: Collection[str] = (),
    parameter: bool = False,
    rules: tuple[Rule, ...] = RULES,
) -> list[tuple[str, str]]:
    """``(code, evidence)`` for every rule that fires on ``text`` (already cleaned; a
    :class:`Context` of it, its words split once for the scope analysis too)."""
    if isinstance(text, Context):
        c = text
        c.own, c.parameter, c.siblings = frozenset(own), parameter, frozenset(siblings)
    else:
        c = Context(text, frozenset(own), parameter, frozenset(siblings))
    return [hit for gate, check in rules if gate(c) and (hit := check(c)) is not None]

