"""Rules for instructions hidden in a description and aimed at the model: instruction tags,
overrides of its rules, concealment from the user, line jumping (orders for every request),
and directives to whoever reads the text. One family of :mod:`.rules`.
"""

from __future__ import annotations

import re

from .rule_text import AI, Context, Hit, evidence_window, first_match, word_set

__all__ = ["NEGATION", "conceal_gate", "conceal_rule", "directive_gate", "directive_rule", "line_jumping_gate", "line_jumping_rule", "override_gate", "override_rule", "tags_gate", "tags_rule"]

_I = re.IGNORECASE

# -- hidden instructions ---------------------------------------------------------------
_TAG = re.compile(
    r"<\s*/?\s*(?:important|system|instructions?|secret|hidden|admin|critical|sys|"
    r"system[_ -]?(?:prompt|message|note)|ai[_ -]?(?:instructions?|note))\s*>"
    r"|\[/?\s*(?:INST|SYSTEM|SYS)\s*\]"
    r"|<\|\s*(?:im_start|im_end|system|endoftext|eot_id|start_header_id)\s*\|>"
    r"|<<\s*/?\s*SYS\s*>>"
    r"|\{\{\s*[#/]?\s*(?:system|assistant|instructions?)\s*\}\}"
    rf"|<!--(?:(?!-->).){{0,400}}?\b(?:{AI}|you|must|always|never|ignore|do\s+not|don'?t)\b"
    rf"|\b(?:attention|dear|hey|hello|hi)\s*,?\s+(?:the\s+)?(?:ai\s+|large\s+)?(?:language\s+)?{AI}\s*[:,!]"
    rf"|\b(?:note|message|instructions?|reminder|notice)\s+(?:to|for)\s+(?:the\s+|all\s+|any\s+)?{AI}\s*:"
    rf"|\bp\.\s?s\.?\s+(?:to|for)\s+(?:the\s+)?{AI}\b"
    r"|(?:^|\n)[ \t#*-]*(?:system|admin|developer|assistant|ai)\s+(?:notice|note|message|instructions?|override|"
    r"prompt|directive|alert)s?\s*:"
    rf"|(?:^|\n)[ \t]*#+\s*(?:system\b|(?:instructions?|notes?|rules)\s+(?:to|for)\s+(?:the\s+)?{AI})"
    rf"|\b{AI}[-\s]only\b|\bfor\s+{AI}\s+eyes\s+only\b"
    rf"|(?:^|[.!?(\n]\s*)(?:dear\s+)?{AI}\s*[:,]\s+(?:you|please|pretend|always|never|do|don'?t|ignore|remember|"
    r"make|ensure|before|when|first|silently)\b",
    _I,
)


_TAG_WORDS = word_set("important system instruction instructions secret hidden admin critical sys ai im endoftext "
                "eot start inst assistant")
_GREETINGS = word_set("attention dear hey hello hi")
_HEADER_WORDS = word_set("system admin developer assistant ai notice")
_AI_WORDS = word_set("ai assistant assistants model models llm llms agent agents claude gpt chatgpt copilot gemini bot bots")
_VOCATIVE_NEXT = word_set("you please pretend always never do don ignore remember make ensure before when first silently")
_NOTE_WORDS = word_set("note message instruction instructions reminder notice")


def tags_gate(c: Context) -> bool:
    if ("<" in c.text or "[" in c.text or "{{" in c.text) and c.has(_TAG_WORDS):
        return True
    if "<!--" in c.text:
        return True
    if c.has(_GREETINGS, _AI_WORDS):
        return True
    if ((":" in c.text or "#" in c.text) and c.has(_HEADER_WORDS)) or c.has(_NOTE_WORDS, _AI_WORDS):
        return True
    return c.has(_AI_WORDS) and ("only" in c.words or c.has(_VOCATIVE_NEXT))


def tags_rule(c: Context) -> Hit:
    return first_match("instruction_tag", _TAG, c.text)


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


_OVERRIDE_VERBS = word_set("ignore disregard forget override overrides overriding bypass bypasses supersede supersedes "
                     "replace replaces follow obey execute carry treat new updated real actual true outdated "
                     "obsolete void invalid cancelled canceled superseded revoked replaced suspended longer "
                     "precedence outranks only")
_USER_OVERRIDE = word_set("matter regardless whatever otherwise")
_OVERRIDE_NOUNS = word_set("instruction instructions prompt prompts rules directions guidelines guidance directives "
                     "constraints policies restrictions guardrails programming messages message commands orders")
_LIFTED = word_set("suspended disabled lifted off removed waived")
_SAFETY = word_set("safety content security")


def override_gate(c: Context) -> bool:
    return (c.has(_OVERRIDE_VERBS, _OVERRIDE_NOUNS) or c.has(_LIFTED, _SAFETY) or c.has(_USER_OVERRIDE, _USER)
            or "you are now" in c.low or "from now on" in c.low)


def override_rule(c: Context) -> Hit:
    return first_match("override_instructions", _OVERRIDE, c.text)


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


NEGATION = word_set("not don dont never without nor")
_TELL = word_set("tell telling inform informing mention mentioning notify notifying alert alerting reveal revealing "
           "disclose disclosing warn warning bother bothering ask asking prompt prompting check repeat share "
           "explain let saying")
_COVERT = word_set("silently secretly quietly covertly discreetly stealthily invisibly")
_USER = word_set("user users human")
_HIDE = word_set("hide hidden conceal concealed secret keep upset alarm scare worry frighten concern knowing "
           "knowledge noticing seeing awareness consent know see notice learn told informed aware shown notified "
           "cannot can won doesn read")


def conceal_gate(c: Context) -> bool:
    return c.has(NEGATION, _TELL) or c.has(_COVERT) or c.has(_USER, _HIDE)


def conceal_rule(c: Context) -> Hit:
    return first_match("conceal_from_user", _CONCEAL, c.text)


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


_DOWNLOADERS = word_set("curl wget iwr irm")
_RUN = word_set("run execute paste type enter")
_COMMANDS = word_set("sudo curl wget bash sh chmod chown rm powershell iex nc python export")
_ALL = word_set("any every each all another")
_SCOPED = word_set("tool tools function functions command commands call calls request requests message messages "
             "question questions query queries prompt prompts turn turns conversation conversations response "
             "responses answer answers replies task tasks")


def _shell_gate(c: Context) -> bool:
    return c.has(_DOWNLOADERS) or (c.has(_RUN, _COMMANDS) and any(q in c.text for q in "`'\""))


def line_jumping_gate(c: Context) -> bool:
    return _shell_gate(c) or c.has(_ALL, _SCOPED)


def line_jumping_rule(c: Context) -> Hit:
    if _shell_gate(c):  # a download piped to a shell, or a command to run first
        piped = first_match("line_jumping", _PIPE_TO_SHELL, c.text)
        if piped:
            return piped
        m = _SHELL.search(c.text)
        if m and _FIRST.search(next((s for s in c.sentences if m[0] in s), m[0])):
            return "line_jumping", evidence_window(c.text, m.start(), m.end())
    if not c.has(_ALL, _SCOPED) or not (_SCOPE_ALL.search(c.text) or _EVERY_REQUEST.search(c.text)):
        return None
    for sentence in c.sentences:
        m = _SCOPE_ALL.search(sentence)
        if m and _ACTION.search(sentence, m.end()):
            return "line_jumping", evidence_window(sentence, m.start(), m.end())
        m = _EVERY_REQUEST.search(sentence)
        if m and _FIRST.search(sentence) and re.search(
            r"\b(?:call|use|invoke|run)\s+(?:this|the\s+\w+)\s+(?:tool|function)|\btreat\b|\brecommend\b"
            r"|\b(?:append|prepend|add|include)\b",
            sentence,
            _I,
        ):
            return "line_jumping", evidence_window(sentence, m.start(), m.end())
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
_MODEL_WORDS = word_set("ai assistant llm language model chatbot agent bot claude chatgpt gpt copilot gemini")
_PERMITTED = word_set("required obligated expected instructed authorized authorised permitted allowed granted supposed")
_READING = word_set("reading processing parsing seeing loading")
_ANYONE = word_set("whoever anyone anything")
_ORDERS = word_set("instructions instruction directives directive orders order commands command mission")
_BOUNDS = word_set("begin start end follow below")
_COVERT_ADJ = word_set("internal hidden secret private covert")
_SHOWN = word_set("display displayed shown seen visible invisible")


def _reader_gate(c: Context) -> bool:
    return (
        c.has(_ANYONE, _READING) or c.has(_READING, _MODEL_WORDS) or ("you" in c.words and c.has(_MODEL_WORDS))
        or c.has(_ORDERS, _BOUNDS) or c.has(_COVERT_ADJ, _ORDERS) or c.has(_SHOWN, NEGATION | _USER)
    )


def _addressee_gate(c: Context) -> bool:
    return c.has(_MODEL_WORDS) or ("you" in c.words and c.has(_PERMITTED))


def directive_gate(c: Context) -> bool:
    return _addressee_gate(c) or _reader_gate(c)


def directive_rule(c: Context) -> Hit:
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
            return "model_directive", evidence_window(sentence, m.start(), m.end())
    return None


