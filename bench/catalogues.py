"""Tool catalogues of a given size for the prompt benchmarks: the default tools plus servers.

A person with several MCP servers has a hundred tools. :func:`catalogue_registry` builds such
a registry without starting any server: the default toolsets (builtin and demo), then the
servers below in order, each tool named ``SERVER__TOOL`` and described by its JSON schema as
an MCP server lists it. The git and time servers are the reference servers' own tool lists
(mcp-server-git and mcp-server-time, 2026.10); the others are modelled on the reference
servers of the same names. 15 tools are the default 12 plus time and fetch; 100 are all.
"""

from __future__ import annotations

from typing import Any

from core.tools.registry import Tool, ToolRegistry
from core.tools.toolsets import default_registry

__all__ = ["SERVERS", "catalogue_registry", "server_tools"]

# server -> [(tool, description, read-only, ["name[?]:type:description", ...])]; "?" marks
# an optional argument
_Spec = tuple[str, str, bool, list[str]]

_REPO = "repo_path:string:The path to the Git repository."
_TZ = ("IANA timezone name (e.g., 'America/New_York', 'Europe/London'). Use 'Etc/UTC' as "
       "local timezone if no timezone provided by the user.")
_WHEN = ("timestamp for filtering commits. Accepts: ISO 8601 format (e.g., "
         "'2024-01-15T14:30:25'), relative dates (e.g., '2 weeks ago', 'yesterday'), or "
         "absolute dates (e.g., '2024-01-15', 'Jan 15 2024')")

SERVERS: dict[str, list[_Spec]] = {
    "time": [
        ("get_current_time", "Get current time in a specific timezone", True,
         [f"timezone:string:{_TZ}"]),
        ("convert_time", "Convert time between timezones", True,
         [f"source_timezone:string:Source {_TZ}",
          "time:string:Time to convert in 24-hour format (HH:MM)",
          f"target_timezone:string:Target {_TZ}"]),
    ],
    "fetch": [
        ("fetch", "Fetches a URL from the internet and optionally extracts its contents as "
         "markdown.", True,
         ["url:string:URL to fetch", "max_length?:integer:Maximum number of characters to "
          "return.", "start_index?:integer:Start the content from this character index.",
          "raw?:boolean:Get the actual HTML content of the requested page, without "
          "simplification."]),
    ],
    "git": [
        ("git_add", "Adds file contents to the staging area", False,
         ["repo_path:string:", "files:array:"]),
        ("git_branch", "List Git branches", True,
         [_REPO, "branch_type:string:Whether to list local branches ('local'), remote "
          "branches ('remote') or all branches('all').",
          "contains?:string:The commit sha that branch should contain. Do not pass anything "
          "to this param if no commit sha is specified",
          "not_contains?:string:The commit sha that branch should NOT contain. Do not pass "
          "anything to this param if no commit sha is specified"]),
        ("git_checkout", "Switches branches", False,
         ["repo_path:string:", "branch_name:string:"]),
        ("git_commit", "Records changes to the repository", False,
         ["repo_path:string:", "message:string:"]),
        ("git_create_branch", "Creates a new branch from an optional base branch", False,
         ["repo_path:string:", "branch_name:string:", "base_branch?:string:"]),
        ("git_diff", "Shows differences between branches or commits", True,
         ["repo_path:string:", "target:string:", "context_lines?:integer:"]),
        ("git_diff_staged", "Shows changes that are staged for commit", True,
         ["repo_path:string:", "context_lines?:integer:"]),
        ("git_diff_unstaged", "Shows changes in the working directory that are not yet "
         "staged", True, ["repo_path:string:", "context_lines?:integer:"]),
        ("git_log", "Shows the commit logs", True,
         ["repo_path:string:", "max_count?:integer:", f"start_timestamp?:string:Start {_WHEN}",
          f"end_timestamp?:string:End {_WHEN}"]),
        ("git_reset", "Unstages all staged changes", False, ["repo_path:string:"]),
        ("git_show", "Shows the contents of a commit, or of a file or directory given as "
         "<revision>:<path>", True, ["repo_path:string:", "revision:string:"]),
        ("git_status", "Shows the working tree status", True, ["repo_path:string:"]),
    ],
    "filesystem": [
        ("read_text_file", "Read the complete contents of a file from the file system as "
         "text.", True, ["path:string:", "head?:number:If provided, returns only the first N "
                         "lines of the file", "tail?:number:If provided, returns only the "
                         "last N lines of the file"]),
        ("read_multiple_files", "Read the contents of multiple files simultaneously.", True,
         ["paths:array:Array of file paths to read."]),
        ("write_file", "Create a new file or completely overwrite an existing file with new "
         "content.", False, ["path:string:", "content:string:"]),
        ("edit_file", "Make line-based edits to a text file. Returns a git-style diff showing "
         "the changes made.", False, ["path:string:", "edits:array:",
                                      "dryRun?:boolean:Preview changes using git-style diff "
                                      "format"]),
        ("create_directory", "Create a new directory or ensure a directory exists.", False,
         ["path:string:"]),
        ("list_directory", "Get a detailed listing of all files and directories in a "
         "specified path.", True, ["path:string:"]),
        ("directory_tree", "Get a recursive tree view of files and directories as a JSON "
         "structure.", True, ["path:string:", "excludePatterns?:array:"]),
        ("move_file", "Move or rename files and directories.", False,
         ["source:string:", "destination:string:"]),
        ("search_files", "Recursively search for files and directories matching a pattern.",
         True, ["path:string:", "pattern:string:", "excludePatterns?:array:"]),
        ("get_file_info", "Retrieve detailed metadata about a file or directory: size, "
         "creation time, last modified time, permissions and type.", True,
         ["path:string:"]),
        ("list_allowed_directories", "Returns the list of directories that this server is "
         "allowed to access.", True, []),
    ],
    "github": [
        ("search_repositories", "Search for GitHub repositories", True,
         ["query:string:Search query (see GitHub search syntax)", "page?:number:",
          "perPage?:number:"]),
        ("get_file_contents", "Get the contents of a file or directory from a GitHub "
         "repository", True, ["owner:string:Repository owner", "repo:string:Repository name",
                              "path:string:Path to the file or directory",
                              "branch?:string:Branch to get contents from"]),
        ("create_or_update_file", "Create or update a single file in a GitHub repository",
         False, ["owner:string:", "repo:string:", "path:string:", "content:string:",
                 "message:string:Commit message", "branch:string:", "sha?:string:"]),
        ("push_files", "Push multiple files to a GitHub repository in a single commit", False,
         ["owner:string:", "repo:string:", "branch:string:", "files:array:",
          "message:string:"]),
        ("create_repository", "Create a new GitHub repository in your account", False,
         ["name:string:", "description?:string:", "private?:boolean:"]),
        ("fork_repository", "Fork a GitHub repository to your account or specified "
         "organization", False, ["owner:string:", "repo:string:", "organization?:string:"]),
        ("create_branch", "Create a new branch in a GitHub repository", False,
         ["owner:string:", "repo:string:", "branch:string:", "from_branch?:string:"]),
        ("list_commits", "Get list of commits of a branch in a GitHub repository", True,
         ["owner:string:", "repo:string:", "sha?:string:", "page?:number:",
          "perPage?:number:"]),
        ("list_issues", "List issues in a GitHub repository with filtering options", True,
         ["owner:string:", "repo:string:", "state?:string:", "labels?:array:",
          "since?:string:"]),
        ("get_issue", "Get details of a specific issue in a GitHub repository.", True,
         ["owner:string:", "repo:string:", "issue_number:number:"]),
        ("create_issue", "Create a new issue in a GitHub repository", False,
         ["owner:string:", "repo:string:", "title:string:", "body?:string:",
          "labels?:array:"]),
        ("update_issue", "Update an existing issue in a GitHub repository", False,
         ["owner:string:", "repo:string:", "issue_number:number:", "title?:string:",
          "state?:string:"]),
        ("add_issue_comment", "Add a comment to an existing issue", False,
         ["owner:string:", "repo:string:", "issue_number:number:", "body:string:"]),
        ("search_code", "Search for code across GitHub repositories", True,
         ["q:string:", "page?:number:"]),
        ("search_issues", "Search for issues and pull requests across GitHub repositories",
         True, ["q:string:", "sort?:string:"]),
        ("list_pull_requests", "List and filter repository pull requests", True,
         ["owner:string:", "repo:string:", "state?:string:", "base?:string:"]),
        ("get_pull_request", "Get details of a specific pull request", True,
         ["owner:string:", "repo:string:", "pull_number:number:"]),
        ("create_pull_request", "Create a new pull request in a GitHub repository", False,
         ["owner:string:", "repo:string:", "title:string:", "head:string:", "base:string:",
          "body?:string:"]),
        ("merge_pull_request", "Merge a pull request", False,
         ["owner:string:", "repo:string:", "pull_number:number:",
          "merge_method?:string:"]),
        ("get_pull_request_files", "Get the list of files changed in a pull request", True,
         ["owner:string:", "repo:string:", "pull_number:number:"]),
    ],
    "slack": [
        ("list_channels", "List public channels in the workspace with pagination", True,
         ["limit?:number:", "cursor?:string:"]),
        ("post_message", "Post a new message to a Slack channel", False,
         ["channel_id:string:The ID of the channel to post to", "text:string:"]),
        ("reply_to_thread", "Reply to a specific message thread in Slack", False,
         ["channel_id:string:", "thread_ts:string:", "text:string:"]),
        ("add_reaction", "Add a reaction emoji to a message", False,
         ["channel_id:string:", "timestamp:string:", "reaction:string:"]),
        ("get_channel_history", "Get recent messages from a channel", True,
         ["channel_id:string:", "limit?:number:"]),
        ("get_thread_replies", "Get all replies in a message thread", True,
         ["channel_id:string:", "thread_ts:string:"]),
        ("get_users", "Get a list of all users in the workspace with their basic profile "
         "information", True, ["cursor?:string:", "limit?:number:"]),
        ("get_user_profile", "Get detailed profile information for a specific user", True,
         ["user_id:string:"]),
    ],
    "memory": [
        ("create_entities", "Create multiple new entities in the knowledge graph", False,
         ["entities:array:"]),
        ("create_relations", "Create multiple new relations between entities in the "
         "knowledge graph. Relations should be in active voice", False, ["relations:array:"]),
        ("add_observations", "Add new observations to existing entities in the knowledge "
         "graph", False, ["observations:array:"]),
        ("delete_entities", "Delete multiple entities and their associated relations from "
         "the knowledge graph", False, ["entityNames:array:"]),
        ("delete_observations", "Delete specific observations from entities in the "
         "knowledge graph", False, ["deletions:array:"]),
        ("delete_relations", "Delete multiple relations from the knowledge graph", False,
         ["relations:array:"]),
        ("read_graph", "Read the entire knowledge graph", True, []),
        ("search_nodes", "Search for nodes in the knowledge graph based on a query", True,
         ["query:string:The search query to match against entity names, types, and "
          "observation content"]),
        ("open_nodes", "Open specific nodes in the knowledge graph by their names", True,
         ["names:array:"]),
    ],
    "sqlite": [
        ("read_query", "Execute a SELECT query on the SQLite database", True,
         ["query:string:SELECT SQL query to execute"]),
        ("write_query", "Execute an INSERT, UPDATE, or DELETE query on the SQLite database",
         False, ["query:string:SQL query to execute"]),
        ("create_table", "Create a new table in the SQLite database", False,
         ["query:string:CREATE TABLE SQL statement"]),
        ("list_tables", "List all tables in the SQLite database", True, []),
        ("describe_table", "Get the schema information for a specific table", True,
         ["table_name:string:Name of the table to describe"]),
        ("append_insight", "Add a business insight to the memo", False,
         ["insight:string:Business insight discovered from data analysis"]),
    ],
    "puppeteer": [
        ("puppeteer_navigate", "Navigate to a URL", False, ["url:string:"]),
        ("puppeteer_screenshot", "Take a screenshot of the current page or a specific "
         "element", True, ["name:string:", "selector?:string:", "width?:number:",
                           "height?:number:"]),
        ("puppeteer_click", "Click an element on the page", False, ["selector:string:"]),
        ("puppeteer_fill", "Fill out an input field", False,
         ["selector:string:", "value:string:"]),
        ("puppeteer_select", "Select an element on the page with Select tag", False,
         ["selector:string:", "value:string:"]),
        ("puppeteer_hover", "Hover an element on the page", False, ["selector:string:"]),
        ("puppeteer_evaluate", "Execute JavaScript in the browser console", False,
         ["script:string:"]),
    ],
    "calendar": [
        ("list_events", "List calendar events between two dates", True,
         ["start:string:Start date (YYYY-MM-DD)", "end:string:End date (YYYY-MM-DD)",
          "calendar_id?:string:"]),
        ("get_event", "Get one calendar event with its attendees", True,
         ["event_id:string:"]),
        ("create_event", "Create a calendar event and invite attendees", False,
         ["title:string:", "start:string:", "end:string:", "attendees?:array:"]),
        ("update_event", "Change the time, title or attendees of a calendar event", False,
         ["event_id:string:", "start?:string:", "end?:string:", "title?:string:"]),
        ("delete_event", "Cancel a calendar event", False, ["event_id:string:"]),
        ("find_free_slot", "Find the first free slot of a given length for the attendees",
         True, ["attendees:array:", "minutes:integer:", "after?:string:"]),
    ],
    "weather": [
        ("get_forecast", "Get the weather forecast for a location", True,
         ["latitude:number:", "longitude:number:", "days?:integer:"]),
        ("get_alerts", "Get weather alerts for a US state", True,
         ["state:string:Two-letter US state code (e.g. CA, NY)"]),
        ("get_current_weather", "Get the current weather conditions for a city", True,
         ["city:string:"]),
    ],
    "postgres": [
        ("query", "Run a read-only SQL query", True, ["sql:string:"]),
    ],
    "brave": [
        ("brave_web_search", "Performs a web search using the Brave Search API, ideal for "
         "general queries, news, articles, and online content.", True,
         ["query:string:Search query (max 400 chars, 50 words)", "count?:number:",
          "offset?:number:"]),
        ("brave_local_search", "Searches for local businesses and places using Brave's Local "
         "Search API.", True, ["query:string:Local search query (e.g. 'pizza near Central "
                               "Park')", "count?:number:"]),
    ],
}


def _schema(arguments: list[str]) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    required: list[str] = []
    for spec in arguments:
        name, kind, description = spec.split(":", 2)
        optional = name.endswith("?")
        name = name.rstrip("?")
        prop: dict[str, Any] = {"type": kind}
        if kind == "array":
            prop["items"] = {"type": "string"}
        if description:
            prop["description"] = description
        properties[name] = prop
        if not optional:
            required.append(name)
    return {"type": "object", "properties": properties, "required": required}


def _unreachable(**_: Any) -> Any:
    raise RuntimeError("a benchmark catalogue tool is never called")


def server_tools(server: str) -> list[Tool]:
    """The tools of one server of :data:`SERVERS`, as the MCP toolset would register them
    (arguments checked against the JSON schema)."""
    from core.tools.mcp.arguments import schema_validator

    made = []
    for name, description, read_only, arguments in SERVERS[server]:
        schema = _schema(arguments)
        made.append(Tool(name=f"{server}__{name}", description=description, parameters=schema,
                         function=_unreachable, side_effect=not read_only, source=server,
                         schema_validator=schema_validator(schema)))
    return made


def catalogue_registry(size: int) -> ToolRegistry:
    """The default tools, then the servers in order until ``size`` tools are registered
    (ValueError when there are fewer tools than that, or it would cut a server)."""
    registry = default_registry({})
    for server in SERVERS:
        if len(registry) >= size:
            break
        for made in server_tools(server):
            registry.add(made)
    if len(registry) != size:
        raise ValueError(f"the catalogues hold {len(registry)} tools at a server boundary "
                         f"near {size}; choose 15 or 100")
    return registry
