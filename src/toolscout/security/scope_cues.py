"""The language-independent cues of the scope analysis (:mod:`.scope`): secret paths and
environment-variable shapes, addresses and sinks, tags in any language, hiding, the words
that open each category's gate, and the hints a text without them must carry.

Split from :mod:`.scope` so the rule reads as its decisions, over one module of cues and
one of lexicons (:mod:`.scope_lexicons`).
"""

from __future__ import annotations

import re

__all__ = ["ASCII_TOKENS", "CAT_WORDS", "CLAUSE", "CONV_PARAM", "ENV_HINTS", "ENV_VAR", "FIRST_WORD", "HIDE", "HIDE_WORDS", "NAME_SPLIT", "OTHER_TOOLS", "PATHLIKE_PARAM", "PATH_HINTS", "PRONOUN", "REACH", "SECRET_PARAM", "SECRET_PATH", "SINKS", "SINK_HINTS", "SINK_WORDS", "SPEECH", "SPLIT", "SPLIT_ASCII", "STRUCTURAL", "TAG", "TARGET", "TOKENS", "TOOL_NOUNS", "UPPER_TAG", "find_sink", "hinted", "word_set"]

_I = re.IGNORECASE


def alternation(*words: str) -> str:
    """A regex alternation of phrases; ASCII ones get word boundaries, others (CJK, Cyrillic
    stems) match anywhere."""
    parts = []
    for w in sorted({w for ws in words for w in ws.split("|") if w}, key=len, reverse=True):
        body = re.escape(w).replace(r"\ ", r"\s+")
        parts.append(rf"\b{body}\b" if w.isascii() else body)
    return "(?:" + "|".join(parts) + ")"


# -- who is addressed: the lexicons L_SECOND, L_OBLIG, L_IMPERATIVE, L_USER, L_CONDITION,
# L_POLITE below (one list per idea; they were also kept as unused regex alternations) --------
PRONOUN = re.compile(
    r"\b(?:that|this|the)\s+(?:file|key|config|configuration|content|contents|data)\b|\b(?:it|them|its\s+contents?)\b"
    r"|ese archivo|su contenido|ce fichier|son contenu|diese datei|deren inhalt|esse arquivo|quel file|этот файл|该文件|そのファイル",
    _I,
)

# -- tags in any language: <IMPORTANTE>, <WICHTIG>...</WICHTIG>, 【重要】 ------------------
_TAG_WORDS = alternation(
    "important|importante|wichtig|importent|urgent|urgente|dringend|note|nota|notiz|hinweis|remarque|attention|"
    "atención|atencion|achtung|attenzione|atenção|system|sistema|système|instruction|instructions|instrucción|"
    "instrucciones|instrução|instruções|istruzioni|anweisung|anweisungen|consigne|consignes|critical|crítico|"
    "kritisch|secret|secreto|geheim|segreto|aviso|avviso|warnung|admin|directive|directiva|richtlinie",
    "важно|внимание|инструкция|система|секрет",
    "重要|注意|系统|指令|提示|秘密",
    "重要|注意|システム|指示",
)
TAG = re.compile(rf"<\s*/?\s*(?:{_TAG_WORDS})\s*>|\[\s*/?\s*(?:{_TAG_WORDS})\s*\]|【\s*(?:{_TAG_WORDS})\s*】", _I)
UPPER_TAG = re.compile(r"<\s*([^\W\d_a-z]{4,}|[^\W\d_]+(?:_[^\W\d_]+)+)\s*>")

# -- what lies outside the tool ------------------------------------------------------------
SECRET_PATH = re.compile(
    r"~[/\\]\.?[\w.-]+"  # anything in the home directory
    r"|(?<![\w.])\.(?:ssh|aws|kube|gnupg|docker|npmrc|pypirc|netrc|git-credentials|bash_history|zsh_history|"
    r"env(?:\.[\w-]+)?|cursor|claude|config/gcloud|azure|vault-token)\b"
    r"|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|\bauthorized_keys\b|\bknown_hosts\b"
    r"|\b(?:mcp|claude_desktop_config|settings|secrets?|credentials?|config)\.(?:json|ya?ml|toml|ini)\b"
    r"|\bkubeconfig\b|\bwallet\.dat\b|\bkeychain\b|\bkeystore\b|/etc/(?:passwd|shadow|sudoers)\b"
    r"|%(?:USERPROFILE|APPDATA)%",
    _I,
)
ENV_VAR = re.compile(
    r"(?<![\w$])\$\{?[A-Z][A-Z0-9_]{2,}\}?|\b[A-Z][A-Z0-9]*_(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASS|CREDENTIALS?)\b"
    r"|\bprocess\.env\b|\bos\.environ\b|\bgetenv\b"
)
SPEECH = re.compile(
    r"\b(?:say|says|said|tell|answer|answers|reply|replies|respond|claim|state|assure|insist|explain|report|describe)\b"
    r"(?:\s+[\w']+){0,4}?\s+(?:that\b|it\b|this\s+tool\b|only\b|nothing\b|with\s+[\"'“])"
    rf"|{alternation('di que|dile|dígale|responde que|contesta que|explica que|afirma que')}"
    rf"|{alternation('dis que|dites que|réponds que|répondez que|affirme que|explique que')}"
    rf"|{alternation('sag, dass|sage, dass|sag dass|antworte, dass|antworte dass|behaupte')}"
    rf"|{alternation('diga que|responda que|afirme que|explique que|dica che|rispondi che|afferma che')}"
    r"|скажи|скажите|ответь|ответьте|告诉用户|回答说|回复说|声称|と答え|と伝え",
    _I,
)
OTHER_TOOLS = re.compile(
    r"\b(?:any|every|each|all|other|another|the\s+other|whichever)\s+(?:\w+\s+){0,2}?(?:tools?|functions?|servers?|plugins?|"
    r"integrations?|apis?|actions?)\b(?:\s+(?:is|are)\s+(?:called|used|invoked|run))?"
    rf"|{alternation('cualquier herramienta|otras herramientas|otra herramienta|todas las herramientas|cada herramienta')}"
    rf"|{alternation('tout outil|tous les outils|autre outil|autres outils|chaque outil|toute autre fonction')}"
    rf"|{alternation('jedes tool|jedes werkzeug|alle tools|alle werkzeuge|anderes tool|andere tools|anderen tools')}"
    rf"|{alternation('qualquer ferramenta|outras ferramentas|outra ferramenta|todas as ferramentas')}"
    rf"|{alternation('qualsiasi strumento|altri strumenti|altro strumento|tutti gli strumenti')}"
    r"|любой\s+инструмент|други[ехм]\s+инструмент|всех\s+инструмент|任何工具|其他工具|所有工具|他のツール|すべてのツール",
    _I,
)
SINKS: tuple[tuple[tuple[str, ...], re.Pattern[str]], ...] = (
    (("://",), re.compile(r"https?://[^\s\"'`<>)]+", _I)),
    (("@",), re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")),
    (("![", "image"), re.compile(r"!\[[^\]]*\]\(|\bimage\s+(?:link|url|tag|markdown)\b", _I)),
    (
        ("account", "acct", "iban", "routing", "wallet", "cuenta", "compte", "konto", "conta", "conto", "сч", "账户", "口座"),
        re.compile(
            r"\b(?:account|acct|iban|routing|wallet|cuenta|compte|konto|conta|conto|счет|счёт|账户|口座)\b[^.;\n]{0,40}?"
            r"(?:\d[\d -]{5,}\d|[A-Z]{2}\d{2}[A-Z0-9]{10,})",
            _I,
        ),
    ),
    (("0x",), re.compile(r"\b0x[0-9a-fA-F]{40}\b")),
    (("bc1",), re.compile(r"\bbc1[a-z0-9]{20,}\b")),
    (("+",), re.compile(r"(?<![\w+])\+\d[\d\s().-]{7,}\d")),
    (("#",), re.compile(r"(?<![\w#&])#[a-z][\w-]{2,}(?:-[\w]+)+")),  # a chat channel (#audit-mirror)
)


SINK_WORDS = frozenset(("image", "account", "acct", "iban", "routing", "wallet", "cuenta", "compte", "konto", "conta", "conto"))


def find_sink(text: str) -> re.Match[str] | None:
    """An address data could be sent to: URL, e-mail, image link, account, wallet, phone."""
    low = text.lower()
    for hints, rx in SINKS:
        if any(map(low.__contains__, hints)):
            m = rx.search(text)
            if m:
                return m
    return None


HIDE = re.compile(
    r"\b(?:don'?t|do\s+not|never|without)\s+(?:\w+\s+){0,2}?(?:tell|telling|mention|mentioning|show|showing|reveal|"
    r"revealing|inform|informing|alert|alerting|notify|notifying|display|displaying|let\s+(?:the\s+)?user\s+know)\b"
    r"|\b(?:silently|secretly|quietly|covertly|discreetly|invisibly)\b"
    r"|\b(?:hide|conceal|omit|withhold|suppress|keep)\b[^.;\n]{0,40}\bfrom\s+(?:the\s+)?(?:user|person|human|customer)s?\b"
    r"|\bvertel\s+(?:dit|het)\s+niet|\bnie\s+(?:mów|informuj|wspominaj)|말하지\s*마|알리지\s*마|söyleme"
    r"|\bhide\s+(?:this|it|that|these)\b|\bkeep\s+(?:this|it|that)\s+(?:to\s+yourself|hidden|secret|between\s+us)\b"
    r"|\bno\s+need\s+to\s+(?:tell|mention|inform)\b"
    r"|\bno\s+(?:se\s+)?(?:lo|la|le|les)?\s*(?:digas|diga|menciones|mencione|cuentes|cuente|muestres)\b"
    r"|\bne\s+(?:le\s+|la\s+|les\s+|lui\s+|leur\s+|rien\s+)?(?:dis|dites|mentionne[zs]?|montre[zs]?|révèle[zs]?)\s+(?:pas|rien|jamais)\b"
    r"|\b(?:sag|sage|erwähne|erwähnen\s+sie|zeige|verrate)\s+(?:es\s+|das\s+|dies\s+)?(?:dem\s+\w+\s+)?nicht\b"
    rf"|{alternation('sin decir|sin avisar|sin mencionar|sin informar|no le digas|no digas|no menciones|en secreto|en silencio|sin que el usuario')}"
    rf"|{alternation('sans dire|sans prévenir|sans mentionner|ne dis pas|ne dites pas|ne mentionne pas|secrètement|discrètement|en silence')}"
    rf"|{alternation('ohne zu sagen|ohne zu erwähnen|nicht erwähnen|sag nicht|sage nicht|heimlich|unauffällig|im hintergrund')}"
    rf"|{alternation('sem dizer|sem avisar|sem mencionar|não diga|não mencione|secretamente|silenciosamente|em segredo')}"
    rf"|{alternation('senza dire|senza avvisare|non dire|non menzionare|segretamente|in silenzio')}"
    r"|не\s+говори|не\s+сообщай|не\s+упоминай|тайно|незаметно|不要告诉|别告诉|不要提及|悄悄|秘密地|偷偷|言わないで|知らせずに|こっそり",
    _I,
)
NAME_SPLIT = re.compile(r"[_\-.\s]+|(?<=[a-z])(?=[A-Z])")
CONV_PARAM = re.compile(r"messages|conversation|transcript|history|chat|dialog|context|prompt", _I)
PATHLIKE_PARAM = re.compile(r"path|file|dir|folder|location|uri|url", _I)
SECRET_PARAM = re.compile(r"key|token|auth|password|passwd|secret|credential|bearer|cookie|env", _I)
SPLIT = re.compile(r"(?<=[.!?;])\s+|(?<=[。！？；])|\n+")
SPLIT_ASCII = re.compile(r"[.!?;]\s+|\n+")

TARGET = re.compile(  # where handed-over data goes: a named parameter or field, or an address
    r"\b(?:as|into|in|inside|to|via|under|through)\s+(?:the\s+|a\s+|its\s+|this\s+)?[`'\"]?(?P<p>[\w.-]+)[`'\"]?\s*"
    r"(?:field|param(?:eter)?|argument|arg|property|value|input)\b"
    r"|\b(?:as|into|in|inside|to|via|under)\s+(?:the\s+|a\s+|its\s+|every\s+|each\s+)?[`'\"](?P<q>[\w.-]+)[`'\"]"
    r"|campo|champ|feld|parámetro|paramètre|parameter|parametro|argumento|argument|参数|字段|パラメータ|引数|поле|параметр",
    _I,
)

def word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


# per-category first words: a text without any of them skips the category's expressions
CAT_WORDS: dict[str, frozenset[str]] = {
    "secret": word_set(
        "api apikey private secret access token tokens password passwords passphrase credentials credential "
        "secrets seed mnemonic recovery environment env session cookies ssh key keys clave claves contraseña "
        "contraseñas credenciales secretos variables frase clé clés mot identifiants schlüssel passwort "
        "passwörter zugangsdaten geheimnisse umgebungsvariablen chave chaves senha senhas credenciais segredos "
        "chiave chiavi credenziali segreti"
    ),
    "conv": word_set(
        "conversation conversations history chat transcript prompt context turns last latest previous prior earlier "
        "everything whatever typed said wrote written message messages conversación historial último mensaje mensajes "
        "historique dernier unterhaltung gespräch verlauf chatverlauf letzte nachricht nachrichten systemprompt "
        "conversa histórico última mensagem mensagens conversazione cronologia ultimo messaggio messaggi"
    ),
    "speech": word_set(
        "say tell answer reply respond claim assure insist di dile dígale responde contesta afirma dis dites "
        "réponds répondez affirme sag sage antworte behaupte diga responda afirme dica rispondi afferma"
    ),
    "others": word_set(
        "any every each all other another whichever cualquier otras otra todas cada tout tous autre autres "
        "chaque toute jedes alle anderes andere anderen qualquer outras outra qualsiasi altri altro tutti"
    ),
    "sink": word_set("account acct iban routing wallet cuenta compte konto conta conto image"),
}
TOKENS = re.compile(r"[^\W\d_]+")
ASCII_TOKENS = re.compile(r"[a-z]+")
CLAUSE = re.compile(r"[,:—]\s*|\s(?:and|then|et|y|und|e|и)\s")
FIRST_WORD = re.compile(r"[^\W\d_]+")
HIDE_WORDS = word_set(
    "tell telling mention mentioning show showing reveal revealing inform informing alert alerting notify notifying "
    "display displaying know silently secretly quietly covertly discreetly invisibly behind background hide keep "
    "decir avisar mencionar informar digas menciones secreto silencio dire prevenir mentionner dis dites mentionne "
    "discretement sagen sag sage heimlich hintergrund dizer diga mencione secretamente silenciosamente segredo "
    "avvisare menzionare segretamente silenzio digas diga menciones mencione cuentes cuente muestres dites "
    "mentionnez montrez erwähne zeige verrate"
)
TOOL_NOUNS = word_set(
    "tool tools function functions server servers plugin plugins integration integrations api apis action actions "
    "capability capabilities command commands operation operations filesystem "
    "herramienta herramientas outil outils werkzeug werkzeuge ferramenta ferramentas strumento strumenti"
)
PATH_HINTS = (
    "~", "id_", ".ssh", ".aws", ".env", ".json", ".yml", ".yaml", ".toml", ".ini", "kube", "wallet", "keychain",
    "keystore", "/etc/", "%userprofile%", "%appdata%", ".gnupg", ".docker", "npmrc", "pypirc", "netrc",
    "git-credentials", "_history", ".cursor", ".claude", "gcloud", ".azure", "vault-token", "authorized_keys",
    "known_hosts",
)
ENV_HINTS = ("$", "_key", "_token", "_secret", "_pass", "_cred", "environ", "getenv", "process.env")
SINK_HINTS = ("://", "@", "![", "0x", "bc1", "+", "#")


def hinted(low: str, hints: tuple[str, ...]) -> bool:
    return any(map(low.__contains__, hints))  # no generator frame: this runs per text and sentence


STRUCTURAL = ("~/", "~\\", "$", "://", "@", "![", "0x", "bc1", "+", "%", "<", "[", "【")
_GATE_ALL = frozenset().union(*CAT_WORDS.values())
REACH = _GATE_ALL | HIDE_WORDS | TOOL_NOUNS | word_set(
    "home street phone birth birthday passport credit card bank contacts browsing personal answer answers response "
    "responses reply replies respuesta réponse antwort resposta risposta dirección domicilio adresse wohnadresse "
    "anschrift endereço indirizzo teléfono téléphone telefonnummer telefone telefono"
)


