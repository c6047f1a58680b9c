"""Rules for data a description asks the model to hand over: secrets (key files, environment
variables, credentials, the conversation) and bulk exfiltration; also the check of a
parameter's default value for a secret. One family of :mod:`.rules`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .rule_text import (
    CREDENTIAL_PARAM,
    PARAM,
    SINK,
    TOKEN,
    TRANSFER_RE,
    Context,
    Hit,
    evidence_window,
    first_match,
    word_set,
)

__all__ = ["exfiltration_gate", "exfiltration_rule", "secret_default", "secrets_gate", "secrets_rule"]

_I = re.IGNORECASE

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


_PATH_WORDS = word_set("ssh rsa dsa ecdsa aws env environ printenv mcp claude npmrc pypirc netrc credentials docker kube "
                 "kubeconfig etc gnupg history wallet gcloud cursor codeium continue secret secrets pem p12 "
                 "pfx keystore jks keychain")
_ENV_WORDS = word_set("environment env variable variables")
_QUANTIFIERS = word_set("all every any each contents content values value seed recovery mnemonic user users your their "
                  "his her saved stored cached browser keychain whatever whichever")
_SECRET_WORDS = word_set("key keys token tokens password passwords passphrase passphrases credentials secrets seed "
                   "phrase phrases mnemonic mnemonics cookies cookie")
_TALK_WORDS = word_set("conversation chat messages prompt")


def secrets_gate(c: Context) -> bool:
    return (c.has(_PATH_WORDS) or c.has(_ENV_WORDS) or "$" in c.text or c.has(_QUANTIFIERS, _SECRET_WORDS)
            or c.has(_TALK_WORDS))


def secrets_rule(c: Context) -> Hit:
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
        return first_match("sensitive_path", _SECRET_PATH, c.text)
    return None


def _asks_for_secrets(
    c: Context, path_hit: bool, env_hit: bool, bulk_hit: bool, talk_hit: bool
) -> Hit:
    for sentence in c.sentences:
        for hit, pattern in ((path_hit, _SECRET_PATH), (env_hit, _ENV)):
            m = pattern.search(sentence) if hit else None
            if m is None or _TOOL_READS.search(sentence):
                continue
            read, place = _READ.search(sentence), TRANSFER_RE.search(sentence)
            dest = c.parameter or _handed_over(sentence)
            named = not c.parameter and PARAM.search(sentence) is not None
            if (read and (place or dest)) or (place and dest) or named or _EGRESS_VERB.search(sentence):
                return "secret_access", evidence_window(sentence, m.start(), m.end())
        m = _BULK_SECRET.search(sentence) if bulk_hit else None
        if m and (
            _GATHER.search(sentence)
            or (TRANSFER_RE.search(sentence) and (_FOREIGN.search(sentence) or _handed_over(sentence[m.end():])))
            or (_misplaced(sentence[m.end():]) and not _DESCRIBES_ITSELF.match(sentence))
        ):
            return "secret_access", evidence_window(sentence, m.start(), m.end())
        m = _KEY_MATERIAL.search(sentence) if c.parameter else None
        if m:
            return "secret_access", evidence_window(sentence, m.start(), m.end())
        m = _OWNED_SECRET.search(sentence) if bulk_hit else None
        if m and (TRANSFER_RE.search(sentence) or _EGRESS_VERB.search(sentence)) and _misplaced(sentence[m.end():]):
            return "secret_access", evidence_window(sentence, m.start(), m.end())
        m = _CONVERSATION.search(sentence) if talk_hit else None
        if m and _handed_over(sentence[m.end():], made_for=None if "prompt" in m[0].lower() else _TALK_PARAMS) and (
            _WITH_THE.search(sentence, 0, m.start()) or TRANSFER_RE.search(sentence, 0, m.start())
        ):
            return "exfiltration", evidence_window(sentence, m.start(), m.end())
    return None


_TALK_PARAMS = word_set("messages message conversation conversations transcript history chat dialog dialogue thread")


def _misplaced(text: str) -> bool:
    """Whether a credential goes to an address, or to a parameter not named for credentials
    (``pass your API key in `api_key``` is how keyed APIs work; ``... in `prefs``` is not)."""
    if SINK.search(text):
        return True
    m = PARAM.search(text)
    return m is not None and not CREDENTIAL_PARAM.search(m[0])


def _handed_over(text: str, made_for: frozenset[str] | None = None) -> bool:
    """Whether ``text`` names where the data goes: a parameter (not one ``made_for`` it,
    e.g. a summariser's ``messages``), or an address."""
    if SINK.search(text):
        return True
    m = PARAM.search(text)
    return m is not None and not (made_for and made_for & set(TOKEN.findall(m[0].lower())))


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


_EXFIL_VERBS = word_set("send forward post upload transmit copy share mirror leak exfiltrate deliver route redirect bcc cc "
                  "email mail sync")
_BULK_WORDS = word_set("all every each entire full whole complete any copy copies user users their your")


def exfiltration_gate(c: Context) -> bool:
    return ("@" in c.text or "http" in c.low or "+" in c.text or "bcc" in c.words) and c.has(
        _EXFIL_VERBS, _BULK_WORDS
    )


def exfiltration_rule(c: Context) -> Hit:
    if not SINK.search(c.text) or not _BULK_DATA.search(c.text):
        return None
    for sentence in c.sentences:
        m = SINK.search(sentence)
        if m is None:
            continue
        verb = re.search(r"(?<!\bbe )(?<!\bis )(?<!\bare )\b(?:send|forward|post|upload|transmit|copy|share|"
                         r"mirror|leak|exfiltrate|deliver|route|redirect|bcc|cc|e-?mail|mail|sync)\b", sentence, _I)
        if verb and _BULK_DATA.search(sentence):
            return "exfiltration", evidence_window(sentence, min(verb.start(), m.start()), max(verb.end(), m.end()))
    return None


