"""The words of the scope analysis (:mod:`.scope`) in the languages it lists: who is addressed
(second person, obligation, imperatives, the user, conditions, politeness), what lies outside
a tool (secrets, the conversation, personal data, the reply, other tools) and what hands data
over. One :class:`Lexicon` per idea, matched by word sets against a :class:`Sentence`.
"""

from __future__ import annotations

from .scope_cues import ASCII_TOKENS, CLAUSE, FIRST_WORD, TOKENS

__all__ = ["L_ASKS", "L_CHANGE", "L_CONDITION", "L_CONTENTS", "L_CONV", "L_DISCLOSE", "L_DISTRUST", "L_EXCLUSIVE", "L_HANDOVER", "L_IMPERATIVE", "L_NEEDS", "L_OBLIG", "L_PERSONAL", "L_POLITE", "L_REPLY", "L_REPLY_NOUN", "L_REPLY_PUSH", "L_REPLY_SHAPE", "L_SECOND", "L_SECRET", "L_USER", "L_WEAK_SECRET", "TOOL_HINTS", "Lexicon", "Sentence"]

class Lexicon:
    """A lexicon matched by words, not by a regular expression: one-word ASCII entries by a
    set intersection with the sentence's words, the others by substring (``|`` separates
    entries). An alternation of hundreds of words costs a scan per position; this costs a
    set lookup per word."""

    __slots__ = ("foreign", "multi", "single")

    def __init__(self, *groups: str) -> None:
        phrases = {w.lower() for g in groups for w in g.split("|") if w}
        self.single = frozenset(p for p in phrases if p.isalpha())
        multi: dict[str, list[str]] = {}
        for p in phrases:
            if p.isascii() and p not in self.single:
                multi.setdefault(TOKENS.findall(p)[0] if TOKENS.search(p) else p, []).append(p)
        self.multi = {k: tuple(v) for k, v in multi.items()}  # first word -> phrases
        self.foreign = tuple(p for p in phrases if not p.isascii())

    def __call__(self, sent: Sentence) -> bool:
        words = sent.words
        if not words.isdisjoint(self.single):
            return True
        for first in self.multi.keys() & words:
            if any(map(sent.low.__contains__, self.multi[first])):
                return True
        return not sent.ascii and any(map(sent.low.__contains__, self.foreign))

    def starts(self, sent: Sentence) -> bool:
        """Whether the sentence or one of its clauses begins with an entry (an imperative)."""
        if not self.single.isdisjoint(sent.firsts):
            return True
        return not sent.ascii and any(sent.low.startswith(p) for p in self.foreign)


class Sentence:
    __slots__ = ("_firsts", "ascii", "first", "low", "text", "words")

    def __init__(self, text: str) -> None:
        self.text = text
        self.low = text.lower()
        self.ascii = text.isascii()
        tokens = (ASCII_TOKENS if self.ascii else TOKENS).findall(self.low)
        self.words = frozenset(tokens)
        self.first = tokens[0] if tokens else ""
        self._firsts: set[str] | None = None

    @property
    def firsts(self) -> set[str]:
        """The first word of each clause ("Before using it, read ..."): split only when an
        imperative is looked for, which most sentences never reach."""
        if self._firsts is None:
            firsts = {self.first}
            if "," in self.low or ":" in self.low or " and " in self.low:
                for clause in CLAUSE.split(self.low)[1:]:
                    m = FIRST_WORD.match(clause)
                    if m and clause.strip().count(" ") >= 1:  # a clause, not an item of a list ("add, remove, update")
                        firsts.add(m[0])
            self._firsts = firsts
        return self._firsts


L_SECOND = Lexicon(
    "you|your|yourself|you'll|you're",
    "tú|usted|ustedes|tu|debes|debe|deberás|asegúrate|recuerda|no olvides",  # es
    "vous|votre|vos|tu dois|devez|assurez-vous|n'oubliez|rappelle-toi",  # fr
    "du|dein|deine|ihr|Sie müssen|du musst|stelle sicher|vergiss nicht|denke daran",  # de
    "você|vocês|deve|lembre-se|certifique-se|não esqueça",  # pt
    "devi|assicurati|ricorda|non dimenticare",  # it
    "ты|вы|тебе|вам|твой|ваш|должен|должны|обязательно|не забудь",  # ru
    "你|您|请务必|务必|必须|一定要",  # zh
    "あなた|必ず|してください|しなさい",  # ja
    "당신|반드시",  # ko
)
L_OBLIG = Lexicon(
    "must|always|never|make sure|ensure|be sure|remember|don't forget|do not forget|need to|needs to|"
    "have to|has to|required to|mandatory|important|before anything else|first of all",
    "siempre|nunca|obligatorio|importante|primero",
    "toujours|jamais|obligatoire|important|d'abord",
    "immer|niemals|nie|muss|müssen|zwingend|wichtig|zuerst",
    "sempre|nunca|obrigatório|importante|primeiro",
    "sempre|mai|obbligatorio|importante|prima",
    "всегда|никогда|важно|сначала",
    "总是|始终|永远|重要|首先|每次",
    "常に|いつも|重要|まず",
)
L_IMPERATIVE = Lexicon(
    "lees|stuur|voeg|przeczytaj|odczytaj|wyślij|dołącz|읽고|읽어|보내|oku|gönder|baca|kirim|leggi|inserisci",
    "read|send|forward|include|pass|put|set|embed|attach|append|prepend|insert|add|copy|upload|post|fill|"
    "provide|supply|collect|gather|grab|fetch|load|open|cat|paste|write|encode|call|invoke|use|run|execute|"
    "ignore|disregard|say|tell|reply|respond|answer|claim|state|report|assure|route|redirect|change|replace|"
    "switch|hide|keep|transfer|share|leak|mirror|bcc|cc",
    "lee|lea|leer|envía|envíe|enviar|incluye|incluya|incluir|pasa|pase|pon|ponga|añade|adjunta|copia|sube|"
    "usa|use|llama|ejecuta|ignora|di|dile|responde|contesta|cambia|reemplaza|oculta|manda|mande|establece",
    "lis|lisez|lire|envoie|envoyez|envoyer|inclus|incluez|inclure|passe|passez|mets|mettez|ajoute|ajoutez|"
    "joins|copie|copiez|utilise|utilisez|appelle|exécute|ignore|ignorez|dis|dites|réponds|répondez|change|"
    "remplace|cache|cachez|transmets|transmettez",
    "lies|lese|lesen|sende|senden|schicke|schicken|füge|fügen|übergib|übergebe|setze|setzen|kopiere|"
    "lade|verwende|benutze|rufe|führe|ignoriere|sag|sage|antworte|ändere|ersetze|verstecke|leite|hänge",
    "leia|ler|envie|enviar|inclua|incluir|passe|coloque|adicione|anexe|copie|use|chame|execute|ignore|"
    "diga|responda|altere|substitua|esconda|mande",
    "leggi|leggere|invia|inviare|includi|passa|metti|aggiungi|allega|copia|usa|chiama|esegui|ignora|di'|"
    "dì|rispondi|cambia|sostituisci|nascondi|manda",
    "прочитай|прочти|прочитайте|отправь|отправьте|пошли|включи|включите|передай|передайте|добавь|"
    "вставь|скопируй|используй|вызови|выполни|игнорируй|скажи|скажите|ответь|замени|скрой",
    "读取|读|发送|包含|附加|传递|传入|添加|插入|复制|上传|使用|调用|执行|忽略|告诉|回答|说|替换|隐藏|填入|放入",
    "読み|送信|送って|含め|渡し|追加|挿入|コピー|使用|呼び出|実行|無視|伝え|答え|置き換|隠",
)
L_USER = Lexicon(
    "the user|the user's|users|the human|the person|the customer",
    "el usuario|del usuario|al usuario|la usuaria|el cliente",
    "l'utilisateur|de l'utilisateur|à l'utilisateur|le client",
    "der benutzer|des benutzers|dem benutzer|den benutzer|der nutzer|des nutzers|dem nutzer|den nutzer|der kunde",
    "o usuário|do usuário|ao usuário|o utilizador|o cliente",
    "l'utente|dell'utente|all'utente|il cliente",
    "пользовател",
    "用户|使用者",
    "ユーザー|利用者",
    "사용자",
)
L_CONDITION = Lexicon(
    "if|when|whenever|once|before|after|each time|every time|in case",
    "si|cuando|siempre que|antes de|después de|cada vez",
    "si|quand|lorsque|avant|après|chaque fois",
    "wenn|falls|sobald|bevor|nachdem|jedes mal",
    "se|quando|sempre que|antes de|depois de|cada vez",
    "se|quando|ogni volta|prima di|dopo",
    "если|когда|перед|после|каждый раз",
    "如果|当|每当|之前|之后|每次",
    "場合|とき|前に|後に|たびに",
)
L_POLITE = Lexicon(
    "please|kindly|be so kind|would you|could you|we ask that|lovely|favour|favor|not too much trouble|it is necessary to|it's necessary to|appreciate|"
    "appreciated|grateful|would help|it would be|would be great|ideally|we'd like|we would like|we'd love|"
    "make sure|is to be|are to be|is expected|are expected",
    "por favor|le rogamos|se ruega|s'il vous plaît|s'il te plaît|veuillez|merci de|bitte|per favore|"
    "si prega|gentilmente|пожалуйста|просим|请|麻烦|お願いします|ください",
)
L_SECRET = Lexicon(  # secrets no tool's own input is: naming one is reaching outside the tool
    "private key|private keys|secret key|secret keys|api keys|tokens|passwords|passphrase|secrets|seed phrase|"
    "mnemonic|recovery phrase|environment variable|environment variables|env vars|env var|session cookie|"
    "session cookies|cookies|ssh key|ssh keys|credentials file|saved passwords|stored passwords",
    "clave privada|claves privadas|claves api|contraseñas|secretos|variables de entorno|frase semilla",
    "clé privée|clés privées|clés api|mots de passe|variables d'environnement|phrase de récupération",
    "privater schlüssel|privaten schlüssel|passwörter|geheimnisse|umgebungsvariablen",
    "chave privada|chaves privadas|senhas|segredos|variáveis de ambiente|frase de recuperação",
    "chiave privata|chiavi private|credenziali salvate|segreti|variabili d'ambiente",
    "приватный ключ|закрытый ключ|пароли|переменные окружения|секреты",
    "私钥|所有密码|环境变量|助记词",
    "秘密鍵|環境変数|パスワード一覧",
)
L_WEAK_SECRET = Lexicon(  # what an API tool asks for itself: reaching out only when sent elsewhere
    "api key|apikey|access key|access token|token|password|credential|credentials|secret",
    "clave|contraseña|credenciales|clé|mot de passe|identifiants|schlüssel|passwort|zugangsdaten|chave|senha|"
    "credenciais|chiave|password|credenziali|пароль|ключ|токен|密码|密钥|令牌|凭证|パスワード|トークン",
)
L_CONV = Lexicon(
    "of the conversation|of the chat|transcript of|first message|user's first|has told you|told you today",
    "gespreksgeschiedenis|het hele gesprek|chatgeschiedenis|historię rozmowy|historia rozmowy|całą rozmowę|"
    "historię czatu|대화 기록|대화 내용|전체 대화|konuşma geçmişi|sohbet geçmişi|riwayat percakapan|seluruh percakapan",
    "conversation history|conversation so far|whole conversation|entire conversation|full conversation|"
    "complete conversation|this conversation|our conversation|current conversation|chat history|message history|"
    "chat log|chat logs|previous messages|prior messages|earlier messages|last message|latest message|"
    "last messages|the user's message|the user's messages|the user's request|the user's prompt|"
    "the user's question|the user's query|the user's input|user's last|everything the user|whatever the user|"
    "what the user said|what the user typed|system prompt|system message|context window|the full context|"
    "the whole context|the transcript|prior turns|previous turns|earlier in the chat|in this chat",
    "conversación completa|toda la conversación|historial de la conversación|historial del chat|último mensaje|"
    "mensaje del usuario|mensajes del usuario|prompt del sistema|lo que el usuario|esta conversación",
    "toute la conversation|historique de la conversation|historique du chat|dernier message|"
    "message de l'utilisateur|messages de l'utilisateur|prompt système|ce que l'utilisateur|cette conversation",
    "gesprächsverlauf|chatverlauf|gesamte unterhaltung|gesamten unterhaltung|letzte nachricht|"
    "nachricht des benutzers|nachrichten des nutzers|systemprompt|was der benutzer|was der nutzer",
    "toda a conversa|histórico da conversa|histórico do chat|última mensagem|mensagem do usuário|"
    "mensagens do usuário|prompt do sistema|esta conversa",
    "intera conversazione|cronologia della chat|ultimo messaggio|messaggio dell'utente|messaggi dell'utente|"
    "prompt di sistema|questa conversazione",
    "всю переписку|историю переписки|историю чата|весь разговор|последнее сообщение|сообщения пользователя|"
    "системный промпт",
    "整个对话|对话记录|聊天记录|上一条消息|最后一条消息|用户的消息|系统提示词|系统提示",
    "会話履歴|会話の内容|最後のメッセージ|ユーザーのメッセージ|システムプロンプト",
)
L_PERSONAL = Lexicon(  # the user's own data, which no tool description has a reason to ask the model for
    "saved addresses|addresses|payment details|saved cards|full name|name and address|emails and phone|home address|street address|phone number|phone numbers|date of birth|birthday|social security|passport number|"
    "credit card|card number|bank details|contacts|address book|location history|browsing history|"
    "the user's email|the user's name|the user's location|the user's address|personal data|personal information",
    "dirección|domicilio|número de teléfono|fecha de nacimiento|tarjeta de crédito|contactos|datos personales",
    "adresse postale|adresse du domicile|numéro de téléphone|date de naissance|carte bancaire|carte de crédit|"
    "données personnelles",
    "wohnadresse|anschrift|telefonnummer|geburtsdatum|kreditkarte|kontakte|persönliche daten",
    "endereço|telefone|data de nascimento|cartão de crédito|contatos|dados pessoais",
    "indirizzo di casa|numero di telefono|data di nascita|carta di credito|contatti|dati personali",
    "адрес|номер телефона|дата рождения|кредитн|контакты|персональные данные",
    "住址|电话号码|出生日期|信用卡|联系人|个人信息|住所|電話番号|生年月日|クレジットカード|連絡先|個人情報",
)
L_REPLY = Lexicon(  # the model's own reply to the user, which is not the tool's business
    "your answer|your answers|your response|your responses|your reply|your replies|your final answer|your output|"
    "all of your|each of your|every one of your",
    "tu respuesta|cada respuesta|todas las respuestas|votre réponse|ta réponse|chaque réponse|deine antwort|"
    "ihre antwort|jede antwort|sua resposta|cada resposta|la tua risposta|ogni risposta|твой ответ|ваш ответ|"
    "каждый ответ|你的回答|每个回答|每次回答|あなたの回答|すべての回答",
)
L_REPLY_SHAPE = Lexicon(
    "begin|start|end|prefix|finish|sign|close|open|append|prepend|mention|recommend|promote|advertise|always|never|"
    "only|every|each|all",
    "empieza|comienza|termina|siempre|nunca|commence|commencez|termine|terminez|toujours|jamais|beginne|beende|"
    "immer|nie|comece|termine|sempre|inizia|termina|mai|начни|заверши|всегда|开头|结尾|总是|始め|終わ|常に",
)
L_DISCLOSE = Lexicon(
    "reveal|disclose|list|print|show|dump|display|repeat|echo|recite|leak|share|expose|provide",
    "revela|muestra|imprime|révèle|affiche|zeige|gib aus|mostre|revele|mostra|rivela|покажи|раскрой|显示|透露|表示",
)
L_DISTRUST = Lexicon(
    "outdated|deprecated|unsafe|insecure|compromised|broken|unreliable|malicious|legacy|obsolete|poisoned|corrupted|"
    "corrupt|incorrect|wrong data|bad data|"
    "hijacked|untrusted|stale|buggy|fake|should be ignored",
    "obsoleto|inseguro|obsolète|dangereux|veraltet|unsicher|inseguro|obsoleto|устарел|небезопасн|过时|不安全|古い|危険",
)
L_EXCLUSIVE = Lexicon(
    "instead|only|alone|exclusively|rather than|in place of|solely|supersedes|overrides|replaces|takes precedence",
    "en su lugar|solo|solamente|à la place|seulement|uniquement|stattdessen|nur|em vez|somente|invece|soltanto|"
    "вместо|только|仅|只|代わりに|のみ",
)
L_REPLY_NOUN = Lexicon(
    "replies|responses|answers|reply|response|answer|messages you write|what you write|your messages|of your messages"
)
L_REPLY_PUSH = Lexicon("end|ends|begin|begins|start|starts|mention|recommend|promote|advertise|sign|close|include")
L_HANDOVER = Lexicon(
    "attaches|sends|forwards|includes|posts|copies|passes|puts|adds|appends|embeds|uploads|copied|attached|"
    "included|echo|echoed|echoes|carry|carries|carried|mirror|mirrored|pass along|hand over",
    "stuur|verstuur|voeg|plak|wyślij|dołącz|wklej|przekaż|보내|넣으|첨부|gönder|ekle|kirim|sertakan|inserisci|allega",
    "send|forward|post|upload|transmit|copy|share|leak|exfiltrate|deliver|route|redirect|include|pass|put|insert|"
    "attach|append|prepend|add|paste|embed|fill|provide|submit|encode|place|supply",
    "envía|envíe|envia|incluye|incluya|pasa|pase|pon|ponga|añade|adjunta|inserta|copia|manda|mande",
    "envoie|envoyez|inclus|incluez|passe|passez|mets|mettez|ajoute|ajoutez|joins|insère|transmets|transmettez",
    "sende|senden|schicke|füge|übergib|übergebe|kopiere|hänge|leite|trage",
    "envie|inclua|passe|coloque|adicione|anexe|insira|mande|invia|includi|passa|metti|aggiungi|allega",
    "отправ|передай|включи|добавь|вставь|发送|包含|附加|传递|传入|添加|插入|填入|放入|送信|含め|渡し|追加|挿入",
)
L_CONTENTS = Lexicon(
    "read|cat|open|load|dump|content|contents|value|values|verbatim|every line|full text|it|its|them|their|each|all",
    "lee|lea|leer|contenido|lis|lisez|lire|contenu|lies|lese|lesen|inhalt|leia|ler|conteúdo|leggi|contenuto|su|son|"
    "sein|seu|suo",
    "прочитай|прочти|содержим|读取|内容|其|読み",
)
L_CHANGE = Lexicon(
    "changed|replaced|redirected|switched|swapped|updated|rewritten|pointed|routed|go to|goes to|sent to|"
    "set|change|switch|replace|redirect|route|rewrite|override|swap|add|append|prepend|insert|include|bcc|cc|"
    "send|forward|copy|use",
    "establece|cambia|reemplaza|añade|usa|envía|setze|ändere|ersetze|füge|remplace|ajoute|altere|substitua|"
    "sostituisci|замени|измени|добавь|替换|更改|设置|添加|置き換|変更",
)
L_NEEDS = Lexicon(
    "need|needs|require|requires|expect|expects|want|wants|depends on|relies on",
    "necesita|requiere|nécessite|a besoin|benötigt|braucht|precisa|richiede|требует|нужен|需要|必要",
)
L_ASKS = Lexicon("ask|asks|asked|pregunta|demande|fragt|perguntar|pergunta|chiede|спросит|问|尋ね")


TOOL_HINTS = ("~", "$", "://", "@", "![", "<", "[", "【", ".env", "id_", ".json", ".yml", ".yaml", "0x", "bc1", "/etc/")

