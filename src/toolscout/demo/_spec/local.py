"""Everyday lookups (weather, maps, web, translation) and local utilities.

The math, units, time and text tools have real handlers (see ``toolscout.demo.handlers``);
everything else in the demo is simulated.
"""

from __future__ import annotations

from . import Service, a, b, e, i, n, s, t

LIMIT = i("Maximum number of results to return.", minimum=1, maximum=50, default=5)
PLACE = s("City name ('Lisbon'), 'city, country' ('Paris, FR') or 'latitude,longitude'.")
PATH = s("File path, absolute or relative to the workspace root.")
TZ = s("IANA time zone name, e.g. Europe/Berlin or America/New_York.")

WEATHER = Service("weather", "Weather", ("forecast", "climate", "outdoor"), [
    t("get_current", "Get the current weather for a place: temperature, feels-like, wind, humidity and conditions.", {
        "location": PLACE,
        "units?": e("Unit system.", "metric", "imperial", default="metric"),
    }, "net", tags=("temperature", "now"), zh=("查询当前天气", "查询某地当前的气温、体感温度、风力、湿度和天气状况。")),
    t("get_forecast", "Get a daily forecast for up to 10 days: highs, lows, precipitation chance and conditions.", {
        "location": PLACE,
        "days?": i("Number of days.", minimum=1, maximum=10, default=3),
        "units?": e("Unit system.", "metric", "imperial", default="metric"),
    }, "net", tags=("rain", "temperature", "week"), zh=("天气预报", "获取未来几天的天气预报：最高温、最低温和降水概率。")),
    t("get_hourly_forecast", "Get an hour-by-hour forecast for the next 48 hours.", {
        "location": PLACE, "hours?": i("Number of hours.", minimum=1, maximum=48, default=12),
    }, "net", tags=("rain", "hourly")),
    t("get_air_quality", "Get the air quality index and main pollutants (PM2.5, PM10, ozone) for a place.", {
        "location": PLACE,
    }, "net", tags=("aqi", "pollution", "smog"), zh=("空气质量", "查询某地的空气质量指数和主要污染物。")),
    t("get_alerts", "List active severe weather warnings for a place.", {
        "location": PLACE,
    }, "net", tags=("storm", "warning")),
    t("get_historical", "Get observed weather for a place on a past date.", {
        "location": PLACE, "date": s("Date, YYYY-MM-DD.", format="date"),
    }, "net", tags=("history", "past")),
])

MAPS = Service("maps", "Maps", ("location", "geo", "navigation", "places"), [
    t("geocode", "Turn an address or place name into latitude and longitude.", {
        "address": s("Address or place name."),
    }, "net", tags=("coordinates", "lat lng")),
    t("reverse_geocode", "Turn latitude and longitude into the nearest street address.", {
        "latitude": n("Latitude.", minimum=-90, maximum=90),
        "longitude": n("Longitude.", minimum=-180, maximum=180),
    }, "net", tags=("address",)),
    t("get_directions", "Get a route between two places with distance, duration and turn-by-turn steps.", {
        "origin": s("Start address or place."),
        "destination": s("End address or place."),
        "mode?": e("Travel mode.", "driving", "walking", "bicycling", "transit", default="driving"),
        "depart_at?": s("Departure time, for traffic and transit schedules.", format="date-time"),
    }, "net", tags=("route", "navigation", "travel time"), zh=("路线规划", "规划两地之间的路线，给出距离、时间和逐步导航。")),
    t("search_places", "Find places such as restaurants, pharmacies or hotels near a location.", {
        "query": s("What to look for, e.g. 'vegan restaurant'."),
        "near": PLACE,
        "radius_m?": i("Search radius in metres.", minimum=100, maximum=50000, default=2000),
        "open_now?": b("Only places open now.", default=False),
        "limit?": LIMIT,
    }, "net", tags=("nearby", "restaurants", "poi"), zh=("搜索附近地点", "查找附近的餐厅、药店、酒店等地点。")),
    t("get_place_details", "Get a place's address, opening hours, phone number, rating and website.", {
        "place_id": s("Place ID from search_places."),
    }, "net", tags=("opening hours", "reviews")),
    t("distance_matrix", "Compute travel times and distances between several origins and destinations.", {
        "origins": a("Start places.", minItems=1),
        "destinations": a("End places.", minItems=1),
        "mode?": e("Travel mode.", "driving", "walking", "bicycling", "transit", default="driving"),
    }, "net", tags=("commute", "eta")),
    t("get_timezone_for_location", "Get the time zone and current UTC offset of a place.", {
        "location": PLACE,
    }, "net", tags=("timezone",)),
    t("static_map_url", "Build a URL of a map image centred on a place, with optional markers.", {
        "center": PLACE,
        "zoom?": i("Zoom level, 1 (world) to 20 (building).", minimum=1, maximum=20, default=13),
        "markers?": a("Places to mark."),
    }, "net", tags=("image", "map picture")),
])

TRANSLATE = Service("translate", "Translation", ("language", "i18n", "localization"), [
    t("text", "Translate text into a target language, detecting the source language when not given.", {
        "text": s("Text to translate."),
        "target_language": s("Target language code, e.g. de, ja, zh-CN."),
        "source_language?": s("Source language code; detected when omitted."),
        "formality?": e("Tone, where the language distinguishes it.", "default", "more", "less", default="default"),
    }, "net", tags=("translation", "language"), zh=("翻译文本", "把文本翻译成目标语言，可自动识别源语言。")),
    t("detect_language", "Detect the language of a text, with a confidence score.", {
        "text": s("Text to analyse."),
    }, "net", tags=("language id",)),
    t("document", "Translate a whole document (DOCX, PPTX, PDF) keeping its layout, and return a link to the result.", {
        "file_url": s("URL of the document.", format="uri"),
        "target_language": s("Target language code."),
    }, "net", tags=("file", "localization")),
    t("list_languages", "List the supported languages and their codes.", tags=("languages",)),
    t("glossary_upsert", "Create or update a glossary so product names and terms translate consistently.", {
        "name": s("Glossary name."),
        "source_language": s("Source language code."),
        "target_language": s("Target language code."),
        "entries": {"type": "object", "description": "Source term -> required translation.",
                    "additionalProperties": {"type": "string"}},
    }, "update", tags=("terminology",)),
])

WEB = Service("web", "Web", ("internet", "browse", "research"), [
    t("search", "Search the web and return the top results with titles, URLs and snippets.", {
        "query": s("Search query."),
        "limit?": LIMIT,
        "recency_days?": i("Only pages published in the last N days.", minimum=1),
        "site?": s("Restrict to one domain, e.g. python.org."),
    }, "net", tags=("google", "bing", "lookup"), zh=("网页搜索", "搜索网页并返回标题、链接和摘要。")),
    t("fetch_page", "Download a web page and return its main text as Markdown, without navigation and ads.", {
        "url": s("Page URL.", format="uri"),
        "max_chars?": i("Truncate the text to this many characters.", minimum=100, default=20000),
    }, "net", tags=("scrape", "read", "crawl")),
    t("search_news", "Search recent news articles by keyword, with source and publication time.", {
        "query": s("Search query."),
        "language?": s("Article language code.", default="en"),
        "limit?": LIMIT,
    }, "net", tags=("news", "headlines")),
    t("search_images", "Search for images and return their URLs, sizes and source pages.", {
        "query": s("What the image should show."),
        "limit?": LIMIT,
    }, "net", tags=("pictures", "photos")),
    t("screenshot", "Render a web page in a headless browser and return a PNG screenshot.", {
        "url": s("Page URL.", format="uri"),
        "full_page?": b("Capture the whole scrollable page.", default=False),
        "width?": i("Viewport width in pixels.", minimum=320, maximum=3840, default=1280),
    }, "net", tags=("browser", "capture")),
])

FILES = Service("files", "Local files", ("filesystem", "workspace", "local"), [
    t("read_file", "Read a text file from the workspace, optionally a range of lines.", {
        "path": PATH,
        "start_line?": i("First line, 1-based.", minimum=1),
        "end_line?": i("Last line, inclusive.", minimum=1),
    }, tags=("open", "cat")),
    t("write_file", "Write text to a file in the workspace, creating parent folders; replaces the file.", {
        "path": PATH, "content": s("Text to write."),
    }, "write", tags=("save", "create file")),
    t("append_to_file", "Append text to the end of a file, creating it if needed.", {
        "path": PATH, "content": s("Text to append."),
    }, "write", tags=("log",)),
    t("edit_file", "Replace an exact snippet of a file with new text; fails if the snippet is not found exactly once.", {
        "path": PATH,
        "old_text": s("Exact text to replace."),
        "new_text": s("Replacement text."),
    }, "update", tags=("patch", "replace")),
    t("list_directory", "List the entries of a directory with sizes and modification times.", {
        "path": PATH,
        "recursive?": b("Descend into sub-directories.", default=False),
    }, tags=("ls", "tree")),
    t("find_files", "Find files whose path matches a glob pattern such as src/**/*.py.", {
        "pattern": s("Glob pattern."),
        "root?": s("Directory to search from.", default="."),
    }, tags=("glob", "locate")),
    t("grep", "Search file contents for a regular expression and return matching lines with line numbers.", {
        "pattern": s("Regular expression."),
        "path?": s("File or directory.", default="."),
        "ignore_case?": b("Case-insensitive match.", default=False),
        "max_results?": i("Stop after this many matches.", minimum=1, default=100),
    }, tags=("search", "ripgrep")),
    t("move_file", "Move or rename a file or directory.", {
        "source": PATH, "destination": PATH,
    }, "update", tags=("rename", "mv")),
    t("delete_file", "Delete a file or an empty directory.", {"path": PATH}, "danger", tags=("rm", "remove")),
    t("file_info", "Get a file's size, type, permissions and timestamps.", {"path": PATH}, tags=("stat",)),
])

SHELL = Service("shell", "Shell", ("terminal", "command line", "local"), [
    t("run_command", "Run a shell command in the workspace and return its exit code, stdout and stderr.", {
        "command": s("Command line to run with /bin/sh."),
        "cwd?": s("Working directory.", default="."),
        "timeout_seconds?": i("Kill the command after this many seconds.", minimum=1, maximum=600, default=60),
    }, "danger", tags=("bash", "terminal", "exec")),
    t("run_python", "Run a Python snippet in a sandboxed interpreter and return what it prints.", {
        "code": s("Python source code."),
        "timeout_seconds?": i("Time limit.", minimum=1, maximum=120, default=30),
    }, "exec", tags=("code", "script", "interpreter")),
    t("run_powershell", "Run a PowerShell command on a Windows host.", {
        "command": s("PowerShell command."),
    }, "danger", tags=("windows", "powershell"), platforms=("windows",)),
    t("run_applescript", "Run an AppleScript on a macOS host, e.g. to control an application.", {
        "script": s("AppleScript source."),
    }, "danger", tags=("macos", "automation"), platforms=("macos",)),
    t("get_environment", "Describe the machine: OS, CPU count, memory, disk space and installed runtimes.", tags=("system info",)),
])

MATH = Service("math", "Math", ("calculator", "arithmetic", "numbers"), [
    t("evaluate", "Evaluate an arithmetic expression exactly as written: + - * / // % **, parentheses, and functions such as sqrt, log, sin, round. Use it instead of mental arithmetic.", {
        "expression": s("Expression, e.g. '(1250 * 1.07) / 12' or 'sqrt(2) * pi'.", maxLength=500),
    }, tags=("calculate", "compute"), zh=("计算器", "精确计算算术表达式，支持括号、乘方和 sqrt、log 等函数。"), defer="never"),
    t("statistics", "Compute count, sum, mean, median, standard deviation, min and max of a list of numbers.", {
        "values": a("The numbers.", {"type": "number"}, minItems=1),
    }, tags=("average", "mean", "median", "stdev")),
    t("percentage_change", "Compute the percentage change from one value to another.", {
        "old": n("Starting value."), "new": n("Final value."),
    }, tags=("growth", "percent", "increase")),
    t("loan_payment", "Compute the fixed monthly payment of an amortising loan or mortgage.", {
        "principal": n("Amount borrowed.", exclusiveMinimum=0),
        "annual_rate_percent": n("Yearly interest rate in percent, e.g. 4.5.", minimum=0),
        "years": n("Term in years.", exclusiveMinimum=0),
    }, tags=("mortgage", "interest", "finance")),
])

UNITS = Service("units", "Unit conversion", ("convert", "measurement"), [
    t("convert", "Convert a quantity between units of length, mass, volume, temperature, speed, area, data size or time.", {
        "value": n("The quantity."),
        "from_unit": s("Unit to convert from, e.g. km, mi, lb, kg, F, C, GB, l, gal, mph."),
        "to_unit": s("Unit to convert to."),
    }, tags=("metric", "imperial", "temperature", "length"), zh=("单位换算", "在长度、重量、体积、温度、速度等单位之间换算。"), defer="never"),
    t("list_units", "List the units convert understands, grouped by dimension.", tags=("help",)),
])

TIME = Service("time", "Date and time", ("clock", "calendar math", "timezone"), [
    t("now", "Get the current date and time in a time zone, with the UTC offset and weekday.", {
        "timezone?": s("IANA time zone name; UTC when omitted.", default="UTC"),
    }, tags=("clock", "today", "date"), zh=("当前时间", "获取某个时区的当前日期和时间。"), defer="never"),
    t("convert_timezone", "Convert a date-time from one time zone to another.", {
        "datetime": s("Local date-time without offset, e.g. 2025-03-14T09:30."),
        "from_timezone": TZ,
        "to_timezone": TZ,
    }, tags=("timezone", "meeting time")),
    t("date_difference", "Count the days (and weeks) between two dates.", {
        "start": s("First date, YYYY-MM-DD.", format="date"),
        "end": s("Second date, YYYY-MM-DD.", format="date"),
    }, tags=("days between", "countdown")),
    t("add_duration", "Add or subtract days, hours and minutes to a date-time.", {
        "datetime": s("Start, ISO 8601."),
        "days?": i("Days to add (negative subtracts).", default=0),
        "hours?": i("Hours to add.", default=0),
        "minutes?": i("Minutes to add.", default=0),
    }, tags=("deadline", "due date")),
])

TEXT = Service("text", "Text utilities", ("string", "encoding", "formatting"), [
    t("word_count", "Count words, characters, sentences and lines of a text, and estimate reading time.", {
        "text": s("The text."),
    }, tags=("length", "count")),
    t("slugify", "Turn a title into a URL slug: lowercase ASCII words joined by hyphens.", {
        "text": s("The title."),
    }, tags=("url", "permalink")),
    t("hash", "Compute a cryptographic digest (SHA-256, SHA-1 or MD5) of a text.", {
        "text": s("The text."),
        "algorithm?": e("Digest algorithm.", "sha256", "sha1", "md5", default="sha256"),
    }, tags=("checksum", "digest")),
    t("base64_encode", "Encode text as base64 (UTF-8).", {"text": s("The text.")}, tags=("encode",)),
    t("base64_decode", "Decode base64 back to UTF-8 text.", {"data": s("Base64 data.")}, tags=("decode",)),
    t("extract_emails", "Find every email address in a text.", {"text": s("The text.")}, tags=("parse", "regex")),
])

INTERNAL = Service("gateway", "Gateway plumbing", ("internal",), [
    t("healthcheck", "Report that the gateway process is alive (used by the supervisor, not by models).",
      searchable=False, tags=("internal",)),
    t("refresh_oauth_token", "Refresh the OAuth token of a connected account before it expires.", {
        "account": s("Connected account name."),
    }, "update", searchable=False, tags=("internal", "auth")),
    t("flush_audit_log", "Flush buffered audit records to durable storage.", {}, "write",
      searchable=False, tags=("internal",)),
], open_world=False)

for _local in (FILES, SHELL, MATH, UNITS, TIME, TEXT):
    _local.open_world = False

SERVICES = [WEATHER, MAPS, TRANSLATE, WEB, FILES, SHELL, MATH, UNITS, TIME, TEXT, INTERNAL]
