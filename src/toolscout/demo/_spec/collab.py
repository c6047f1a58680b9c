"""Messaging, mail, calendars, documents and file sharing."""

from __future__ import annotations

from . import Service, a, b, e, i, o, s, t

CHANNEL = s("Channel ID (C024BE91L) or name with a leading #, e.g. #general.")
LIMIT = i("Maximum number of results to return.", minimum=1, maximum=200, default=20)

SLACK = Service("slack", "Slack", ("chat", "messaging", "team"), [
    t("send_message", "Post a message to a Slack channel or direct conversation. Pass thread_ts to reply inside a thread instead of the channel.", {
        "channel": CHANNEL,
        "text": s("Message text; Slack mrkdwn formatting such as *bold* and <@U123> mentions is supported."),
        "thread_ts?": s("Timestamp of the parent message when replying in a thread."),
        "unfurl_links?": b("Show link previews in the message.", default=True),
    }, "write", tags=("post", "chat"), zh=("发送 Slack 消息", "向 Slack 频道或私信发送一条消息，可在线程中回复。")),
    t("schedule_message", "Schedule a message to be posted to a channel at a future time.", {
        "channel": CHANNEL,
        "text": s("Message text."),
        "post_at": s("When to post, as an ISO 8601 date-time with offset.", format="date-time"),
    }, "write", tags=("post", "later")),
    t("update_message", "Edit the text of a message the bot posted earlier.", {
        "channel": CHANNEL,
        "ts": s("Timestamp that identifies the message."),
        "text": s("The new message text."),
    }, "update"),
    t("delete_message", "Delete a message from a channel. Only messages posted by the bot or the authorising user can be deleted.", {
        "channel": CHANNEL,
        "ts": s("Timestamp that identifies the message."),
    }, "delete"),
    t("add_reaction", "Add an emoji reaction to a message.", {
        "channel": CHANNEL,
        "ts": s("Timestamp of the message to react to."),
        "emoji": s("Emoji name without colons, e.g. thumbsup."),
    }, "update", tags=("emoji",)),
    t("list_channels", "List the public and private channels the bot can see, with member counts and topics.", {
        "include_private?": b("Include private channels the bot is a member of.", default=False),
        "limit?": LIMIT,
    }),
    t("create_channel", "Create a new public or private channel.", {
        "name": s("Channel name: lowercase, no spaces, at most 80 characters.", pattern="^[a-z0-9_-]{1,80}$"),
        "is_private?": b("Create a private channel.", default=False),
        "topic?": s("Channel topic shown in the header."),
    }, "write"),
    t("archive_channel", "Archive a channel so it becomes read-only and disappears from the sidebar.", {
        "channel": CHANNEL,
    }, "delete"),
    t("invite_to_channel", "Invite one or more users to a channel.", {
        "channel": CHANNEL,
        "users": a("User IDs to invite, e.g. U024BE7LH.", minItems=1),
    }, "update", tags=("members",)),
    t("get_channel_history", "Fetch recent messages from a channel, newest first, optionally within a time window.", {
        "channel": CHANNEL,
        "oldest?": s("Only messages after this timestamp."),
        "latest?": s("Only messages before this timestamp."),
        "limit?": LIMIT,
    }, tags=("messages", "read")),
    t("get_thread_replies", "Fetch every reply in a message thread.", {
        "channel": CHANNEL,
        "thread_ts": s("Timestamp of the parent message."),
    }, tags=("messages",)),
    t("search_messages", "Search messages across the workspace with Slack search syntax such as from:@ana in:#eng before:2025-01-01.", {
        "query": s("Search query; supports from:, in:, before:, after: modifiers."),
        "sort?": e("Sort order of the results.", "score", "timestamp", default="score"),
        "limit?": LIMIT,
    }, tags=("find", "messages")),
    t("lookup_user", "Find a workspace member by email address and return their user ID, display name and time zone.", {
        "email": s("Email address of the member.", format="email"),
    }, tags=("people", "directory")),
    t("set_status", "Set the authorising user's status text and emoji, optionally expiring at a given time.", {
        "text": s("Status text, at most 100 characters.", maxLength=100),
        "emoji?": s("Status emoji, e.g. :palm_tree:."),
        "expires_at?": s("When the status clears, ISO 8601 date-time.", format="date-time"),
    }, "update", tags=("presence",)),
    t("upload_file", "Upload a text snippet or file content to one or more channels.", {
        "channels": a("Channels to share the file in.", minItems=1),
        "content": s("File content as text."),
        "filename": s("File name including extension, e.g. report.csv."),
        "title?": s("Title shown above the file."),
    }, "write", tags=("attachment", "share")),
])

GMAIL = Service("gmail", "Gmail", ("email", "mail", "google"), [
    t("send_email", "Send an email from the authorised Gmail account. Plain text or HTML body, with optional cc and bcc.", {
        "to": a("Recipient email addresses.", {"type": "string", "format": "email"}, minItems=1),
        "subject": s("Subject line."),
        "body": s("Message body."),
        "cc?": a("Carbon-copy recipients.", {"type": "string", "format": "email"}),
        "bcc?": a("Blind carbon-copy recipients.", {"type": "string", "format": "email"}),
        "html?": b("Treat the body as HTML.", default=False),
    }, "write", tags=("send", "mail"), zh=("发送邮件", "通过 Gmail 账户发送电子邮件，支持抄送和密送。")),
    t("create_draft", "Save an email as a draft without sending it, so a person can review it first.", {
        "to": a("Recipient email addresses.", {"type": "string", "format": "email"}),
        "subject": s("Subject line."),
        "body": s("Message body."),
    }, "write", tags=("draft",)),
    t("search_emails", "Search the mailbox with Gmail query syntax (from:, to:, subject:, has:attachment, newer_than:7d) and return matching message summaries.", {
        "query": s("Gmail search query, e.g. 'from:billing@acme.com newer_than:30d'."),
        "max_results?": LIMIT,
    }, tags=("find", "inbox")),
    t("get_email", "Read one email in full: headers, plain-text body and attachment names.", {
        "message_id": s("Gmail message ID."),
    }, tags=("read", "inbox")),
    t("reply_to_email", "Reply to an email in the same thread, keeping the subject and references.", {
        "message_id": s("ID of the message being answered."),
        "body": s("Reply text."),
        "reply_all?": b("Reply to every recipient of the original.", default=False),
    }, "write", tags=("reply",)),
    t("forward_email", "Forward an email, with its attachments, to other recipients.", {
        "message_id": s("ID of the message to forward."),
        "to": a("Recipient email addresses.", {"type": "string", "format": "email"}, minItems=1),
        "note?": s("Text added above the forwarded message."),
    }, "write"),
    t("add_label", "Apply a label to one or more messages, creating the label if it does not exist.", {
        "message_ids": a("Message IDs to label.", minItems=1),
        "label": s("Label name, e.g. Receipts/2025."),
    }, "update", tags=("organize",)),
    t("archive_email", "Archive messages: remove them from the inbox without deleting them.", {
        "message_ids": a("Message IDs to archive.", minItems=1),
    }, "update", tags=("organize", "inbox zero")),
    t("trash_email", "Move messages to the trash, where they are deleted after 30 days.", {
        "message_ids": a("Message IDs to trash.", minItems=1),
    }, "delete"),
    t("mark_as_read", "Mark messages as read or unread.", {
        "message_ids": a("Message IDs to change.", minItems=1),
        "read?": b("True to mark read, false to mark unread.", default=True),
    }, "update"),
    t("download_attachment", "Download one attachment of a message and return its name, MIME type and base64 content.", {
        "message_id": s("Gmail message ID."),
        "attachment_id": s("Attachment ID from get_email."),
    }, tags=("file",)),
])

CALENDAR = Service("calendar", "Google Calendar", ("calendar", "schedule", "meeting", "google"), [
    t("create_event", "Create a calendar event with attendees, an optional video meeting link and reminders.", {
        "summary": s("Event title."),
        "start": s("Start, ISO 8601 date-time with offset.", format="date-time"),
        "end": s("End, ISO 8601 date-time with offset.", format="date-time"),
        "attendees?": a("Attendee email addresses.", {"type": "string", "format": "email"}),
        "location?": s("Room or address."),
        "description?": s("Agenda or notes."),
        "add_video_call?": b("Attach a video meeting link.", default=False),
        "calendar_id?": s("Calendar to write to; 'primary' is the user's main calendar.", default="primary"),
    }, "write", tags=("meeting", "schedule"), zh=("创建日程", "在日历中创建会议或活动，可邀请参会者并添加视频会议链接。")),
    t("list_events", "List events between two times, expanded so recurring events appear as single occurrences.", {
        "time_min": s("Window start, ISO 8601 date-time.", format="date-time"),
        "time_max": s("Window end, ISO 8601 date-time.", format="date-time"),
        "calendar_id?": s("Calendar to read.", default="primary"),
        "query?": s("Free-text filter on title, description and location."),
    }, tags=("agenda",)),
    t("get_event", "Fetch one event with its attendees and their responses.", {
        "event_id": s("Event ID."),
        "calendar_id?": s("Calendar that holds the event.", default="primary"),
    }),
    t("update_event", "Change an event's time, title, location or description; attendees are notified.", {
        "event_id": s("Event ID."),
        "summary?": s("New title."),
        "start?": s("New start, ISO 8601 date-time.", format="date-time"),
        "end?": s("New end, ISO 8601 date-time.", format="date-time"),
        "location?": s("New location."),
        "description?": s("New description."),
    }, "update", tags=("reschedule",)),
    t("delete_event", "Cancel and delete an event; attendees receive a cancellation.", {
        "event_id": s("Event ID."),
        "notify_attendees?": b("Email a cancellation to attendees.", default=True),
    }, "delete", tags=("cancel",)),
    t("find_free_slots", "Find times when every listed person is free, within working hours, for a meeting of a given length.", {
        "attendees": a("Email addresses whose calendars are checked.", {"type": "string", "format": "email"}, minItems=1),
        "duration_minutes": i("Meeting length in minutes.", minimum=5, maximum=480),
        "time_min": s("Search window start.", format="date-time"),
        "time_max": s("Search window end.", format="date-time"),
    }, tags=("availability", "scheduling", "free busy"), zh=("查找空闲时间", "查找所有参会者都有空的会议时间段。")),
    t("respond_to_invitation", "Accept, decline or tentatively accept a meeting invitation.", {
        "event_id": s("Event ID."),
        "response": e("Your answer.", "accepted", "declined", "tentative"),
        "comment?": s("Note for the organiser."),
    }, "update", tags=("rsvp",)),
    t("list_calendars", "List the calendars the user can see, with their IDs, colours and access roles."),
    t("quick_add", "Create an event from a plain-language sentence such as 'Lunch with Sam tomorrow at noon'.", {
        "text": s("Sentence describing the event."),
    }, "write", tags=("natural language",)),
])

DRIVE = Service("drive", "Google Drive", ("files", "documents", "storage", "google"), [
    t("search_files", "Search Drive files by name, full text or type and return their IDs, owners and links.", {
        "query": s("Words to look for in file names and content."),
        "mime_type?": e("Restrict to one kind of file.", "document", "spreadsheet", "presentation", "pdf", "folder", "image"),
        "limit?": LIMIT,
    }, tags=("find", "docs")),
    t("get_file_metadata", "Fetch a file's metadata: name, size, owner, sharing, modified time and parent folders.", {
        "file_id": s("Drive file ID."),
    }),
    t("read_document", "Export a Google Doc, Sheet or Slides file as plain text or CSV so its content can be read.", {
        "file_id": s("Drive file ID."),
        "export_as?": e("Export format.", "text", "csv", "markdown", default="text"),
    }, tags=("content", "docs")),
    t("create_document", "Create a Google Doc with a title and initial text, optionally inside a folder.", {
        "title": s("Document title."),
        "content?": s("Initial text; Markdown headings and lists are converted."),
        "folder_id?": s("Parent folder ID."),
    }, "write", tags=("docs", "write")),
    t("upload_file", "Upload a file to Drive from text or base64 content.", {
        "name": s("File name with extension."),
        "content": s("File content: text, or base64 when is_base64 is true."),
        "is_base64?": b("Content is base64-encoded binary.", default=False),
        "folder_id?": s("Parent folder ID."),
    }, "write"),
    t("create_folder", "Create a folder, optionally inside another folder.", {
        "name": s("Folder name."),
        "parent_id?": s("Parent folder ID; the root when omitted."),
    }, "write"),
    t("move_file", "Move a file to another folder.", {
        "file_id": s("Drive file ID."),
        "folder_id": s("Destination folder ID."),
    }, "update", tags=("organize",)),
    t("share_file", "Share a file with a person, group or domain at a chosen access level.", {
        "file_id": s("Drive file ID."),
        "email": s("Who gets access.", format="email"),
        "role": e("Access level.", "reader", "commenter", "writer"),
        "notify?": b("Send an email notification.", default=True),
    }, "update", tags=("permissions", "collaborate")),
    t("list_folder", "List the files and folders directly inside a folder.", {
        "folder_id": s("Folder ID; 'root' for My Drive."),
        "limit?": LIMIT,
    }, tags=("browse",)),
    t("delete_file", "Move a file to the Drive trash.", {"file_id": s("Drive file ID.")}, "delete"),
])

DROPBOX = Service("dropbox", "Dropbox", ("files", "storage", "sync"), [
    t("list_folder", "List the entries of a Dropbox folder path.", {
        "path": s("Folder path, e.g. /Projects/2025; empty string for the root."),
        "recursive?": b("Include sub-folders.", default=False),
    }, tags=("browse",)),
    t("upload_file", "Upload text content to a Dropbox path, overwriting or renaming on conflict.", {
        "path": s("Destination path including file name."),
        "content": s("File content as text."),
        "mode?": e("What to do when the file exists.", "overwrite", "add", default="add"),
    }, "write"),
    t("download_file", "Download a file's content as text (small text files only).", {
        "path": s("File path."),
    }),
    t("create_shared_link", "Create a shareable link to a file or folder, optionally expiring or password protected.", {
        "path": s("File or folder path."),
        "expires?": s("Expiry, ISO 8601 date-time.", format="date-time"),
        "password?": s("Password required to open the link."),
    }, "write", tags=("share", "link")),
    t("move", "Move or rename a file or folder.", {
        "from_path": s("Current path."),
        "to_path": s("New path."),
    }, "update", tags=("rename",)),
    t("delete", "Delete a file or folder (recoverable from deleted files for 30 days).", {
        "path": s("Path to delete."),
    }, "delete"),
    t("search", "Search file and folder names and text content in Dropbox.", {
        "query": s("Words to search for."),
        "path?": s("Restrict to this folder."),
    }, tags=("find",)),
    t("get_space_usage", "Report used and allocated storage for the account."),
])

NOTION = Service("notion", "Notion", ("wiki", "notes", "docs", "knowledge base"), [
    t("search", "Search Notion pages and databases the integration can access, by title.", {
        "query": s("Words in the page or database title."),
        "filter?": e("Only return this object type.", "page", "database"),
    }, tags=("find",)),
    t("get_page", "Fetch a page's properties and its content as Markdown.", {
        "page_id": s("Page ID or URL."),
    }, tags=("read",)),
    t("create_page", "Create a page under a parent page or as a row of a database, with Markdown content.", {
        "parent_id": s("Parent page or database ID."),
        "title": s("Page title."),
        "content?": s("Body in Markdown."),
        "properties?": o("Database property values keyed by property name."),
    }, "write", tags=("write", "note")),
    t("append_to_page", "Append Markdown blocks to the end of a page.", {
        "page_id": s("Page ID."),
        "content": s("Markdown to append."),
    }, "write"),
    t("update_page_properties", "Set property values of a database row, such as Status or Due date.", {
        "page_id": s("Page ID."),
        "properties": o("Property values keyed by property name."),
    }, "update"),
    t("query_database", "Query a database with an optional filter and sort, returning its rows.", {
        "database_id": s("Database ID."),
        "filter?": o("Notion filter object, e.g. {\"property\": \"Status\", \"status\": {\"equals\": \"Done\"}}.", {}),
        "sorts?": a("Sort objects.", {"type": "object"}),
        "limit?": LIMIT,
    }, tags=("table", "rows")),
    t("create_database", "Create an inline database on a page with the given property schema.", {
        "parent_page_id": s("Page that will hold the database."),
        "title": s("Database title."),
        "properties": o("Property definitions keyed by name."),
    }, "write"),
    t("archive_page", "Archive (soft-delete) a page.", {"page_id": s("Page ID.")}, "delete"),
    t("add_comment", "Add a comment to a page or reply in a discussion.", {
        "page_id": s("Page ID."),
        "text": s("Comment text."),
        "discussion_id?": s("Reply inside this discussion."),
    }, "write"),
    t("list_users", "List the members and bots of the Notion workspace.", tags=("people",)),
])

TWILIO = Service("twilio", "Twilio", ("sms", "phone", "voice", "messaging"), [
    t("send_sms", "Send an SMS or MMS text message to a phone number.", {
        "to": s("Destination number in E.164 format, e.g. +14155550123.", pattern="^\\+[1-9]\\d{6,14}$"),
        "body": s("Message text, up to 1600 characters.", maxLength=1600),
        "from_number?": s("Sender number or messaging service SID; the account default when omitted."),
        "media_url?": s("URL of an image to send as MMS.", format="uri"),
    }, "write", tags=("text message",), zh=("发送短信", "向手机号码发送短信。")),
    t("send_whatsapp", "Send a WhatsApp message through the WhatsApp Business sender.", {
        "to": s("Recipient number in E.164 format."),
        "body": s("Message text."),
    }, "write", tags=("whatsapp", "chat")),
    t("make_call", "Place an outbound voice call that speaks a message with text-to-speech.", {
        "to": s("Number to call, E.164."),
        "message": s("Text spoken when the call is answered."),
        "voice?": e("Voice used for speech.", "alice", "man", "woman", default="alice"),
    }, "write", tags=("call",)),
    t("list_messages", "List recent messages sent or received, with delivery status.", {
        "to?": s("Filter by recipient number."),
        "from_number?": s("Filter by sender number."),
        "limit?": LIMIT,
    }, tags=("history",)),
    t("get_message_status", "Check the delivery status of one message (queued, sent, delivered, failed).", {
        "message_sid": s("Message SID, starting with SM."),
    }, tags=("delivery",)),
    t("lookup_phone_number", "Validate a phone number and return its country, carrier and line type.", {
        "phone_number": s("Number to look up, any common format."),
    }, tags=("validate", "carrier")),
    t("send_verification_code", "Send a one-time verification code by SMS, voice or email.", {
        "to": s("Phone number (E.164) or email address."),
        "channel": e("How to deliver the code.", "sms", "call", "email"),
    }, "write", tags=("2fa", "otp", "verify")),
    t("check_verification_code", "Check a one-time code the user typed against the one that was sent.", {
        "to": s("The phone number or email the code was sent to."),
        "code": s("The code entered by the user.", pattern="^[0-9]{4,10}$"),
    }, tags=("2fa", "otp")),
])

SENDGRID = Service("sendgrid", "SendGrid", ("email", "marketing", "transactional"), [
    t("send_email", "Send a transactional email, either from raw content or from a dynamic template with data.", {
        "to": a("Recipient addresses.", {"type": "string", "format": "email"}, minItems=1),
        "from_email": s("Verified sender address.", format="email"),
        "subject?": s("Subject line (not needed with a template)."),
        "content?": s("HTML body."),
        "template_id?": s("Dynamic template ID, d-..."),
        "template_data?": o("Values substituted into the template."),
    }, "write", tags=("send", "newsletter")),
    t("add_contacts", "Add or update marketing contacts, optionally putting them on lists.", {
        "contacts": a("Contacts to upsert.", {"type": "object", "properties": {
            "email": {"type": "string", "format": "email"},
            "first_name": {"type": "string"}, "last_name": {"type": "string"}},
            "required": ["email"]}, minItems=1),
        "list_ids?": a("Marketing lists to add the contacts to."),
    }, "update", tags=("contacts", "audience")),
    t("get_email_stats", "Get delivery statistics (requests, delivered, opens, clicks, bounces) for a date range.", {
        "start_date": s("First day, YYYY-MM-DD.", format="date"),
        "end_date?": s("Last day, YYYY-MM-DD.", format="date"),
        "aggregated_by?": e("Bucket size.", "day", "week", "month", default="day"),
    }, tags=("analytics", "deliverability")),
    t("list_templates", "List dynamic email templates with their versions.", tags=("templates",)),
    t("list_bounces", "List addresses that bounced, with the reason, so they can be fixed or removed.", {
        "start_time?": s("Only bounces after this date-time.", format="date-time"),
    }, tags=("deliverability", "suppression")),
    t("remove_from_suppression", "Remove an address from a bounce, block or unsubscribe suppression list.", {
        "email": s("Address to remove.", format="email"),
        "list": e("Which suppression list.", "bounces", "blocks", "spam_reports", "unsubscribes"),
    }, "delete", tags=("suppression",)),
])

SERVICES = [SLACK, GMAIL, CALENDAR, DRIVE, DROPBOX, NOTION, TWILIO, SENDGRID]
