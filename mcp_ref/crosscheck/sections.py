"""Where each requirement the cross-checker cites stands in the spec, and its link on modelcontextprotocol.io.

``SECTIONS`` is drawn from the catalogue (``../shared/spec/<revision>/requirements.tsv``:
the file and the section path of each id); a test keeps it equal to the catalogue
where the spec checkout is present. The table travels with the package, so
``mcp-ref explain`` and the HTML report work without the spec.
"""

import re
from typing import Final

__all__ = ["SECTIONS", "SITE", "anchor", "link", "section_title"]

#: the published specification
SITE: Final = "https://modelcontextprotocol.io/specification"

#: requirement id -> (file of the spec, section path); ids without a revision are 2025-11-25's
SECTIONS: Final[dict[str, tuple[str, str]]] = {
    "basic/authorization#14": (
        "basic/authorization.mdx",
        "Authorization Server Discovery > Protected Resource Metadata Discovery Requirements",
    ),
    "basic/authorization#16": (
        "basic/authorization.mdx",
        "Authorization Server Discovery > Protected Resource Metadata Discovery Requirements",
    ),
    "basic/authorization#60": ("basic/authorization.mdx", "Access Token Usage > Token Handling"),
    "basic/index#10": ("basic/index.mdx", "Messages > Responses > Error Responses"),
    "basic/index#11": ("basic/index.mdx", "Messages > Responses > Error Responses"),
    "basic/index#12": ("basic/index.mdx", "Messages > Responses > Error Responses"),
    "basic/index#13": ("basic/index.mdx", "Messages > Notifications"),
    "basic/index#14": ("basic/index.mdx", "Messages > Notifications"),
    "basic/index#24": ("basic/index.mdx", "JSON Schema Usage > Schema Validation"),
    "basic/index#26": ("basic/index.mdx", "General fields > _meta"),
    "basic/index#3": ("basic/index.mdx", "Messages"),
    "basic/index#4": ("basic/index.mdx", "Messages > Requests"),
    "basic/index#5": ("basic/index.mdx", "Messages > Requests"),
    "basic/index#6": ("basic/index.mdx", "Messages > Requests"),
    "basic/index#7": ("basic/index.mdx", "Messages > Responses > Result Responses"),
    "basic/index#8": ("basic/index.mdx", "Messages > Responses > Result Responses"),
    "basic/lifecycle#1": ("basic/lifecycle.mdx", "Lifecycle Phases > Initialization"),
    "basic/lifecycle#10": ("basic/lifecycle.mdx", "Lifecycle Phases > Initialization > Version Negotiation"),
    "basic/lifecycle#11": ("basic/lifecycle.mdx", "Lifecycle Phases > Initialization > Version Negotiation"),
    "basic/lifecycle#12": ("basic/lifecycle.mdx", "Lifecycle Phases > Initialization > Version Negotiation"),
    "basic/lifecycle#14": ("basic/lifecycle.mdx", "Lifecycle Phases > Operation"),
    "basic/lifecycle#18": ("basic/lifecycle.mdx", "Timeouts"),
    "basic/lifecycle#2": ("basic/lifecycle.mdx", "Lifecycle Phases > Initialization"),
    "basic/lifecycle#3": ("basic/lifecycle.mdx", "Lifecycle Phases > Initialization"),
    "basic/lifecycle#4": ("basic/lifecycle.mdx", "Lifecycle Phases > Initialization"),
    "basic/lifecycle#5": ("basic/lifecycle.mdx", "Lifecycle Phases > Initialization"),
    "basic/lifecycle#6": ("basic/lifecycle.mdx", "Lifecycle Phases > Initialization"),
    "basic/lifecycle#7": ("basic/lifecycle.mdx", "Lifecycle Phases > Initialization > Version Negotiation"),
    "basic/lifecycle#9": ("basic/lifecycle.mdx", "Lifecycle Phases > Initialization > Version Negotiation"),
    "basic/transports#1": ("basic/transports.mdx", "(intro)"),
    "basic/transports#10": ("basic/transports.mdx", "Streamable HTTP > Security Warning"),
    "basic/transports#16": ("basic/transports.mdx", "Streamable HTTP > Sending Messages to the Server"),
    "basic/transports#59": ("basic/transports.mdx", "Streamable HTTP > Session Management"),
    "basic/transports#65": ("basic/transports.mdx", "Streamable HTTP > Protocol Version Header"),
    "basic/transports#18": ("basic/transports.mdx", "Streamable HTTP > Sending Messages to the Server"),
    "basic/transports#19": ("basic/transports.mdx", "Streamable HTTP > Sending Messages to the Server"),
    "basic/transports#21": ("basic/transports.mdx", "Streamable HTTP > Sending Messages to the Server"),
    "basic/transports#23": ("basic/transports.mdx", "Streamable HTTP > Sending Messages to the Server"),
    "basic/transports#28": ("basic/transports.mdx", "Streamable HTTP > Sending Messages to the Server"),
    "basic/transports#3": ("basic/transports.mdx", "stdio"),
    "basic/transports#32": ("basic/transports.mdx", "Streamable HTTP > Sending Messages to the Server"),
    "basic/transports#39": ("basic/transports.mdx", "Streamable HTTP > Listening for Messages from the Server"),
    "basic/transports#42": ("basic/transports.mdx", "Streamable HTTP > Listening for Messages from the Server"),
    "basic/transports#50": ("basic/transports.mdx", "Streamable HTTP > Resumability and Redelivery"),
    "basic/transports#54": ("basic/transports.mdx", "Streamable HTTP > Resumability and Redelivery"),
    "basic/transports#56": ("basic/transports.mdx", "Streamable HTTP > Session Management"),
    "basic/transports#57": ("basic/transports.mdx", "Streamable HTTP > Session Management"),
    "basic/transports#6": ("basic/transports.mdx", "stdio"),
    "basic/transports#60": ("basic/transports.mdx", "Streamable HTTP > Session Management"),
    "basic/transports#61": ("basic/transports.mdx", "Streamable HTTP > Session Management"),
    "basic/transports#67": ("basic/transports.mdx", "Streamable HTTP > Protocol Version Header"),
    "basic/transports#68": ("basic/transports.mdx", "Streamable HTTP > Protocol Version Header"),
    "basic/transports#7": ("basic/transports.mdx", "stdio"),
    "basic/utilities/cancellation#1": ("basic/utilities/cancellation.mdx", "Behavior Requirements"),
    "basic/utilities/cancellation#2": ("basic/utilities/cancellation.mdx", "Behavior Requirements"),
    "basic/utilities/cancellation#3": ("basic/utilities/cancellation.mdx", "Behavior Requirements"),
    "basic/utilities/cancellation#4": ("basic/utilities/cancellation.mdx", "Behavior Requirements"),
    "basic/utilities/ping#1": ("basic/utilities/ping.mdx", "Behavior Requirements"),
    "basic/utilities/progress#1": ("basic/utilities/progress.mdx", "Progress Flow"),
    "basic/utilities/progress#11": ("basic/utilities/progress.mdx", "Behavior Requirements"),
    "basic/utilities/progress#14": ("basic/utilities/progress.mdx", "Implementation Notes"),
    "basic/utilities/progress#2": ("basic/utilities/progress.mdx", "Progress Flow"),
    "basic/utilities/progress#4": ("basic/utilities/progress.mdx", "Progress Flow"),
    "basic/utilities/progress#7": ("basic/utilities/progress.mdx", "Behavior Requirements"),
    "basic/utilities/tasks#1": ("basic/utilities/tasks.mdx", "Capabilities"),
    "basic/utilities/tasks#2": ("basic/utilities/tasks.mdx", "Capabilities > Capability Negotiation"),
    "basic/utilities/tasks#23": ("basic/utilities/tasks.mdx", "Behavior Requirements > Task ID Requirements"),
    "basic/utilities/tasks#26": ("basic/utilities/tasks.mdx", "Behavior Requirements > Task Status Lifecycle"),
    "basic/utilities/tasks#28": ("basic/utilities/tasks.mdx", "Behavior Requirements > Task Status Lifecycle"),
    "basic/utilities/tasks#36": ("basic/utilities/tasks.mdx", "Behavior Requirements > TTL and Resource Management"),
    "basic/utilities/tasks#37": ("basic/utilities/tasks.mdx", "Behavior Requirements > TTL and Resource Management"),
    "basic/utilities/tasks#39": ("basic/utilities/tasks.mdx", "Behavior Requirements > TTL and Resource Management"),
    "basic/utilities/tasks#4": ("basic/utilities/tasks.mdx", "Capabilities > Tool-Level Negotiation"),
    "basic/utilities/tasks#43": ("basic/utilities/tasks.mdx", "Behavior Requirements > Result Retrieval"),
    "basic/utilities/tasks#46": ("basic/utilities/tasks.mdx", "Behavior Requirements > Result Retrieval"),
    "basic/utilities/tasks#47": ("basic/utilities/tasks.mdx", "Behavior Requirements > Result Retrieval"),
    "basic/utilities/tasks#57": ("basic/utilities/tasks.mdx", "Behavior Requirements > Task Listing"),
    "basic/utilities/tasks#6": ("basic/utilities/tasks.mdx", "Capabilities > Tool-Level Negotiation"),
    "basic/utilities/tasks#60": ("basic/utilities/tasks.mdx", "Behavior Requirements > Task Cancellation"),
    "basic/utilities/tasks#61": ("basic/utilities/tasks.mdx", "Behavior Requirements > Task Cancellation"),
    "basic/utilities/tasks#67": ("basic/utilities/tasks.mdx", "Data Types > Related Task Metadata"),
    "basic/utilities/tasks#68": ("basic/utilities/tasks.mdx", "Error Handling > Protocol Errors"),
    "basic/utilities/tasks#9": ("basic/utilities/tasks.mdx", "Capabilities > Tool-Level Negotiation"),
    "client/elicitation#16": (
        "client/elicitation.mdx",
        "Protocol Messages > Completion Notifications for URL Mode Elicitation",
    ),
    "client/elicitation#34": ("client/elicitation.mdx", "Error Handling"),
    "client/elicitation#4": ("client/elicitation.mdx", "Capabilities"),
    "client/elicitation#56": ("client/elicitation.mdx", "Security Considerations > Form Mode Security"),
    "client/elicitation#6": ("client/elicitation.mdx", "Capabilities"),
    "client/roots#1": ("client/roots.mdx", "Capabilities"),
    "client/roots#3": ("client/roots.mdx", "Data Types > Root"),
    "client/roots#4": ("client/roots.mdx", "Error Handling"),
    "client/sampling#10": ("client/sampling.mdx", "Cross-API Compatibility > Tool Choice Modes"),
    "client/sampling#13": ("client/sampling.mdx", "Error Handling"),
    "client/sampling#4": ("client/sampling.mdx", "Tools in Sampling"),
    "client/sampling#5": ("client/sampling.mdx", "Capabilities"),
    "client/sampling#6": ("client/sampling.mdx", "Capabilities"),
    "schema#25": ("schema.mdx", "sampling/createMessage > CreateMessageRequestParams > tools"),
    "schema#37": ("schema.mdx", "tools/call > CallToolResult > isError"),
    "server/prompts#1": ("server/prompts.mdx", "Capabilities"),
    "server/prompts#3": ("server/prompts.mdx", "Data Types > PromptMessage > Image Content"),
    "server/prompts#4": ("server/prompts.mdx", "Data Types > PromptMessage > Audio Content"),
    "server/prompts#6": ("server/prompts.mdx", "Error Handling"),
    "server/resources#1": ("server/resources.mdx", "Capabilities"),
    "server/resources#10": ("server/resources.mdx", "Security Considerations"),
    "server/resources#7": ("server/resources.mdx", "Error Handling"),
    "server/tools#11": ("server/tools.mdx", "Data Types > Tool > Tool Names"),
    "server/tools#15": ("server/tools.mdx", "Data Types > Tool Result > Structured Content"),
    "server/tools#16": ("server/tools.mdx", "Data Types > Tool Result > Output Schema"),
    "server/tools#20": ("server/tools.mdx", "Security Considerations"),
    "server/tools#3": ("server/tools.mdx", "Capabilities"),
    "server/tools#4": ("server/tools.mdx", "Protocol Messages > List Changed Notification"),
    "server/tools#5": ("server/tools.mdx", "Data Types > Tool"),
    "server/tools#7": ("server/tools.mdx", "Data Types > Tool > Tool Names"),
    "server/tools#9": ("server/tools.mdx", "Data Types > Tool > Tool Names"),
    "server/utilities/completion#1": ("server/utilities/completion.mdx", "Capabilities"),
    "server/utilities/completion#2": ("server/utilities/completion.mdx", "Error Handling"),
    "server/utilities/logging#1": ("server/utilities/logging.mdx", "Capabilities"),
    "server/utilities/logging#2": ("server/utilities/logging.mdx", "Protocol Messages > Setting Log Level"),
    "server/utilities/logging#3": ("server/utilities/logging.mdx", "Error Handling"),
    "server/utilities/pagination#2": ("server/utilities/pagination.mdx", "Implementation Guidelines"),
    "server/utilities/pagination#4": ("server/utilities/pagination.mdx", "Implementation Guidelines"),
    "server/utilities/pagination#5": ("server/utilities/pagination.mdx", "Error Handling"),
    "2026-07-28:basic/index#10": ("basic/index.mdx", "Messages > Responses > Result Responses"),
    "2026-07-28:basic/index#12": ("basic/index.mdx", "Messages > Responses > Result Responses > ResultType"),
    "2026-07-28:basic/index#21": ("basic/index.mdx", "Messages > Responses > Error Codes"),
    "2026-07-28:basic/index#22": ("basic/index.mdx", "Messages > Responses > Error Codes"),
    "2026-07-28:basic/index#3": ("basic/index.mdx", "Messages"),
    "2026-07-28:basic/index#52": ("basic/index.mdx", "General fields > _meta"),
    "2026-07-28:basic/index#53": ("basic/index.mdx", "General fields > _meta"),
    "2026-07-28:basic/index#54": ("basic/index.mdx", "General fields > _meta"),
    "2026-07-28:basic/index#55": ("basic/index.mdx", "General fields > _meta"),
    "2026-07-28:basic/index#57": ("basic/index.mdx", "General fields > _meta"),
    "2026-07-28:basic/index#58": ("basic/index.mdx", "General fields > _meta"),
    "2026-07-28:basic/index#59": ("basic/index.mdx", "General fields > _meta"),
    "2026-07-28:basic/index#61": ("basic/index.mdx", "General fields > _meta"),
    "2026-07-28:basic/patterns/cancellation#3": ("basic/patterns/cancellation.mdx", "(intro)"),
    "2026-07-28:basic/patterns/mrtr#12": (
        "basic/patterns/mrtr.mdx",
        "Multi Round-Trip Requests > Basic Workflow > Server Requirements (Basic Workflow)",
    ),
    "2026-07-28:basic/patterns/mrtr#14": (
        "basic/patterns/mrtr.mdx",
        "Multi Round-Trip Requests > Basic Workflow > Server Requirements (Basic Workflow)",
    ),
    "2026-07-28:basic/patterns/mrtr#16": (
        "basic/patterns/mrtr.mdx",
        "Multi Round-Trip Requests > Basic Workflow > Server Requirements (Basic Workflow)",
    ),
    "2026-07-28:basic/patterns/mrtr#17": (
        "basic/patterns/mrtr.mdx",
        "Multi Round-Trip Requests > Basic Workflow > Server Requirements (Basic Workflow)",
    ),
    "2026-07-28:basic/patterns/mrtr#21": (
        "basic/patterns/mrtr.mdx",
        "Multi Round-Trip Requests > Basic Workflow > Client Requirements (Basic Workflow)",
    ),
    "2026-07-28:basic/patterns/mrtr#23": (
        "basic/patterns/mrtr.mdx",
        "Multi Round-Trip Requests > Basic Workflow > Client Requirements (Basic Workflow)",
    ),
    "2026-07-28:basic/patterns/mrtr#25": (
        "basic/patterns/mrtr.mdx",
        "Multi Round-Trip Requests > Basic Workflow > Client Requirements (Basic Workflow)",
    ),
    "2026-07-28:basic/patterns/mrtr#26": (
        "basic/patterns/mrtr.mdx",
        "Multi Round-Trip Requests > Basic Workflow > Client Requirements (Basic Workflow)",
    ),
    "2026-07-28:basic/patterns/mrtr#5": ("basic/patterns/mrtr.mdx", "Multi Round-Trip Requests > Supported Requests"),
    "2026-07-28:basic/patterns/mrtr#9": (
        "basic/patterns/mrtr.mdx",
        "Multi Round-Trip Requests > Basic Workflow > Server Requirements (Basic Workflow)",
    ),
    "2026-07-28:basic/patterns/subscriptions#1": ("basic/patterns/subscriptions.mdx", "Opening a Stream"),
    "2026-07-28:basic/patterns/subscriptions#2": ("basic/patterns/subscriptions.mdx", "Acknowledgment"),
    "2026-07-28:basic/transports/stdio#1": ("basic/transports/stdio.mdx", "(intro)"),
    "2026-07-28:basic/transports/stdio#4": ("basic/transports/stdio.mdx", "(intro)"),
    "2026-07-28:basic/transports/stdio#5": ("basic/transports/stdio.mdx", "(intro)"),
    "2026-07-28:basic/transports/stdio#7": ("basic/transports/stdio.mdx", "Sending Messages"),
    "2026-07-28:basic/transports/stdio#9": ("basic/transports/stdio.mdx", "Receiving Messages"),
    "2026-07-28:basic/transports/streamable-http#13": ("basic/transports/streamable-http.mdx", "Sending Messages"),
    "2026-07-28:basic/transports/streamable-http#16": ("basic/transports/streamable-http.mdx", "Sending Messages"),
    "2026-07-28:basic/transports/streamable-http#20": ("basic/transports/streamable-http.mdx", "Receiving Messages"),
    "2026-07-28:basic/transports/streamable-http#21": ("basic/transports/streamable-http.mdx", "Receiving Messages"),
    "2026-07-28:basic/transports/streamable-http#22": ("basic/transports/streamable-http.mdx", "Receiving Messages"),
    "2026-07-28:basic/transports/streamable-http#25": (
        "basic/transports/streamable-http.mdx",
        "Request Metadata > Protocol Version Header",
    ),
    "2026-07-28:basic/transports/streamable-http#26": (
        "basic/transports/streamable-http.mdx",
        "Request Metadata > Protocol Version Header",
    ),
    "2026-07-28:basic/transports/streamable-http#27": (
        "basic/transports/streamable-http.mdx",
        "Request Metadata > Protocol Version Header",
    ),
    "2026-07-28:basic/transports/streamable-http#28": (
        "basic/transports/streamable-http.mdx",
        "Request Metadata > Protocol Version Header",
    ),
    "2026-07-28:basic/transports/streamable-http#29": (
        "basic/transports/streamable-http.mdx",
        "Request Metadata > Protocol Version Header",
    ),
    "2026-07-28:basic/transports/streamable-http#3": ("basic/transports/streamable-http.mdx", "Security & Endpoint"),
    "2026-07-28:basic/transports/streamable-http#31": (
        "basic/transports/streamable-http.mdx",
        "Request Metadata > Protocol Version Header",
    ),
    "2026-07-28:basic/transports/streamable-http#32": (
        "basic/transports/streamable-http.mdx",
        "Request Metadata > Standard Request Headers",
    ),
    "2026-07-28:basic/transports/streamable-http#36": (
        "basic/transports/streamable-http.mdx",
        "Request Metadata > Custom Headers from Tool Parameters",
    ),
    "2026-07-28:basic/transports/streamable-http#54": (
        "basic/transports/streamable-http.mdx",
        "Request Metadata > Custom Headers from Tool Parameters > Value Encoding",
    ),
    "2026-07-28:basic/transports/streamable-http#60": (
        "basic/transports/streamable-http.mdx",
        "Request Metadata > Custom Headers from Tool Parameters > Server Behavior for Custom Headers",
    ),
    "2026-07-28:basic/transports/streamable-http#61": (
        "basic/transports/streamable-http.mdx",
        "Request Metadata > Custom Headers from Tool Parameters > Server Behavior for Custom Headers",
    ),
    "2026-07-28:basic/transports/streamable-http#63": (
        "basic/transports/streamable-http.mdx",
        "Request Metadata > Server Validation",
    ),
    "2026-07-28:basic/transports/streamable-http#65": (
        "basic/transports/streamable-http.mdx",
        "Request Metadata > Server Validation",
    ),
    "2026-07-28:basic/transports/streamable-http#72": (
        "basic/transports/streamable-http.mdx",
        "Backward Compatibility > Earlier Streamable HTTP Revisions",
    ),
    "2026-07-28:basic/versioning#1": ("basic/versioning.mdx", "Protocol Version Negotiation"),
    "2026-07-28:basic/versioning#10": (
        "basic/versioning.mdx",
        "Backward Compatibility with Initialization-Based Versions",
    ),
    "2026-07-28:basic/versioning#3": ("basic/versioning.mdx", "Protocol Version Negotiation"),
    "2026-07-28:schema#18": ("schema.ts", "Errors > HeaderMismatchError"),
    "2026-07-28:server/discover#1": ("server/discover.mdx", "(intro)"),
    "2026-07-28:server/resources#13": ("server/resources.mdx", "Error Handling"),
    "2026-07-28:server/resources#16": ("server/resources.mdx", "Error Handling"),
    "2026-07-28:server/resources#4": ("server/resources.mdx", "Capabilities"),
    "2026-07-28:server/tools#6": ("server/tools.mdx", "Capabilities"),
    "2026-07-28:server/tools#8": ("server/tools.mdx", "Capabilities"),
    "2026-07-28:basic/index#7": ("basic/index.mdx", "Messages > Responses > Result Responses"),
    "2026-07-28:server/utilities/caching#1": ("server/utilities/caching.mdx", "Cacheable Results"),
    "2026-07-28:server/utilities/caching#11": (
        "server/utilities/caching.mdx",
        "Cacheable Model > Time-to-Live (TTL) Field",
    ),
    "2026-07-28:server/utilities/caching#24": ("server/utilities/caching.mdx", "Interaction with Pagination"),
    "2026-07-28:server/utilities/logging#2": ("server/utilities/logging.mdx", "Capabilities"),
    "2026-07-28:server/utilities/logging#3": (
        "server/utilities/logging.mdx",
        "Requesting Log Messages > Per-request log level",
    ),
    "2026-07-28:server/utilities/logging#6": ("server/utilities/logging.mdx", "Error Handling"),
}


def _split(requirement: str) -> tuple[str, str]:
    revision, sep, rest = requirement.partition(":")
    return (revision, rest) if sep and revision[:2] == "20" else ("2025-11-25", requirement)


def anchor(file: str, section: str) -> str:
    """The heading anchor of ``section`` on the published page (its last heading, slugged)."""
    parts = [p.strip() for p in section.split(">")]
    if file == "schema.mdx" and len(parts) > 1:
        heading = parts[1]  # the type: schema#createmessagerequestparams
    elif section in ("(intro)", ""):
        return ""
    else:
        heading = parts[-1]
    slug = re.sub(r"[^a-z0-9 _-]", "", heading.lower()).strip()
    return re.sub(r"[ _]+", "-", slug)


def link(requirement: str) -> str | None:
    """The URL of the section that states ``requirement`` (None for an id we do not cite)."""
    revision, rid = _split(requirement)
    where = SECTIONS.get(requirement) or SECTIONS.get(rid)
    if where is None:
        return None
    file, section = where
    page = file.removesuffix(".mdx").removesuffix("/index")
    if page == "index":
        page = ""
    target = anchor(file, section)
    url = f"{SITE}/{revision}" + (f"/{page}" if page else "")
    return url + (f"#{target}" if target else "")


def section_title(requirement: str) -> str | None:
    _, rid = _split(requirement)
    where = SECTIONS.get(requirement) or SECTIONS.get(rid)
    return None if where is None else f"{where[0].removesuffix('.mdx')}: {where[1]}"
