"""The cross-check commands of ``mcp-ref``: check, judge (and, later, tap and fixture).

``mcp_ref.cli`` adds them with :func:`add_commands` and runs them with
:func:`run`. Exit status: 1 when a MUST is violated, 0 otherwise, 2 for a
usage error or a target that cannot be started or reached.
"""

import argparse
import contextlib
import json
import logging
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from .config import ROLES, CheckConfig, ConfigError, ToolSpec, load_config, parse_tool_option
from .report import Report
from .targets import HttpTarget, StdioTarget, Target, TargetUnreachable

if TYPE_CHECKING:
    import ssl

__all__ = ["add_commands", "run", "COMMANDS"]

COMMANDS = ("check", "judge", "tap", "fixture", "explain")
EXIT_USAGE = 2


#: seconds the fixture waits for any one answer of a client under test (``check --client``,
#: ``fixture``): its sampling and elicitation answers may come from a person or a model,
#: so it gets longer than a server's answers (CheckConfig's 10 s)
CLIENT_ANSWER_TIMEOUT = 30.0


class UsageError(Exception):
    """Exit status 2, with this message."""


def add_commands(sub: Any) -> None:
    check = sub.add_parser(
        "check",
        help="run the cross-check battery against a server (a command over stdio, or a URL)",
        description=(
            "Connect to an MCP server as a strict client, run the battery (organised by spec chapter, "
            "driven by the server's capabilities), judge every message both ways, and report. "
            "Exit status 1 when a MUST is violated, 2 when the server cannot be started or reached."
        ),
        epilog="examples:  mcp-ref check -- python -m mcp_ref.examples.echo\n"
        "           mcp-ref check --header 'Authorization: Bearer T' http://127.0.0.1:8000/mcp\n"
        "           mcp-ref check --oauth http://127.0.0.1:8000/mcp",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    check.add_argument("target", nargs="*", help="URL, or -- COMMAND ARGS... for a stdio server")
    check.add_argument(
        "--header", action="append", default=[], metavar="'NAME: VALUE'", help="HTTP header for every request"
    )
    check.add_argument(
        "--oauth",
        action="store_true",
        help="(URL) when the server asks for authorization, run the OAuth authorization code flow: the URL to "
        "open is printed (and a browser started), the redirect comes back to a listener on 127.0.0.1",
    )
    check.add_argument(
        "--oauth-client",
        metavar="ID[:SECRET]",
        help="with --oauth: a client registered beforehand (default: dynamic registration)",
    )
    check.add_argument(
        "--oauth-callback-port", type=int, default=0, metavar="PORT", help="with --oauth: the redirect listener's port"
    )
    check.add_argument(
        "--client-credentials",
        metavar="ID:SECRET",
        help="(URL) authorize with the OAuth client credentials grant instead (machine to machine)",
    )
    check.add_argument("--oauth-scope", metavar="SCOPE", help="the scope to ask for (default: the server's challenge)")
    check.add_argument(
        "--cafile",
        metavar="PEM",
        help="(https:// URL) trust the certificates of this file (default: the system's trust store)",
    )
    check.add_argument("--config", metavar="FILE", help="TOML file naming tools with a behaviour (see docs)")
    for role, what in ROLES.items():
        check.add_argument(
            f"--{role.replace('_', '-')}-tool",
            metavar="'NAME [JSON]'",
            help=f"{what}",
        )
    check.add_argument(
        "--call-tool", action="append", default=[], metavar="'NAME [JSON]'", help="a tool to call and judge"
    )
    check.add_argument(
        "--call-all-tools",
        action="store_true",
        help="call every tool the server lists, with arguments made from its input schema, and once more with "
        "arguments the schema refuses (the error path); default: only the tools the server marks read-only "
        "(annotations.readOnlyHint), with valid arguments. Tools may have side effects: only for servers you own",
    )
    check.add_argument(
        "--client",
        action="store_true",
        help="check a client instead: run it against the fixture; {fixture} in its arguments becomes the "
        "fixture's stdio command line, {url} its HTTP URL",
    )
    check.add_argument(
        "--client-timeout",
        type=float,
        default=120.0,
        metavar="SECONDS",
        help="with --client: seconds the client may run in all before it is stopped (default 120)",
    )
    check.add_argument("--only", metavar="CHAPTERS", help="comma-separated chapters to run (default: all)")
    check.add_argument(
        "--revision",
        metavar="REVISION",
        help="check this protocol revision only (default: every revision the server speaks, one report section "
        "each, the latest first)",
    )
    check.add_argument(
        "--timeout",
        type=float,
        help=f"seconds to wait for any one answer (default 10; with --client {CLIENT_ANSWER_TIMEOUT:g}: a client's "
        "sampling and elicitation answers may come from a person or a model)",
    )
    _output_options(check)

    fixture = sub.add_parser(
        "fixture",
        help="serve a strict server that checks the client connecting to it (stdio, or --http)",
        description=(
            "Give your client 'mcp-ref fixture --report report.txt' as its server command (or run "
            "'mcp-ref fixture --http --port 8000' and connect to http://127.0.0.1:8000/mcp). The fixture serves "
            "the everything example, runs a battery against the client once it is initialized (ping, roots, "
            "sampling, elicitation, cancellation, tasks, per its capabilities) and judges every message."
        ),
    )
    fixture.add_argument("--once", action="store_true", help="leave when the battery is done (ends the session)")
    fixture.add_argument("--no-battery", action="store_true", help="only serve and judge the traffic")
    fixture.add_argument("--http", action="store_true", help="serve Streamable HTTP instead of stdio")
    fixture.add_argument("--port", type=int, help="port for --http (default 8000, on 127.0.0.1)")
    fixture.add_argument(
        "--stop-after",
        type=float,
        metavar="SECONDS",
        help="(stdio) end the session after SECONDS whatever the client is doing, and write the report "
        "(check --client passes its --client-timeout)",
    )
    fixture.add_argument(
        "--timeout",
        type=float,
        default=CLIENT_ANSWER_TIMEOUT,
        help=f"seconds to wait for any one answer of the client (default {CLIENT_ANSWER_TIMEOUT:g})",
    )
    _report_file_options(fixture)

    tap = sub.add_parser(
        "tap",
        help="sit between a real client and server, judge both directions live (stdio, or HTTP with --listen)",
        description=(
            "stdio: give your client 'mcp-ref tap --log traffic.jsonl -- COMMAND ARGS...' as the server command; "
            "HTTP: 'mcp-ref tap --listen 127.0.0.1:PORT URL' and point your client at http://127.0.0.1:PORT/mcp "
            "(the URL may be https://: the tap speaks TLS to the server, plain HTTP to the client). "
            "Traffic passes unchanged; findings are printed on stderr as they happen; the exit status is the "
            "server's (stdio: the client must see it), or with --listen 1 when a MUST was found (--strict: a "
            "SHOULD too), else 0. Ctrl-C stops --listen; the report files are written whatever else comes."
        ),
    )
    tap.add_argument("target", nargs="*", help="the server: -- COMMAND ARGS..., or its URL with --listen")
    tap.add_argument("--listen", metavar="HOST:PORT", help="serve HTTP here and forward to the URL (Streamable HTTP)")
    tap.add_argument(
        "--cafile",
        metavar="PEM",
        help="(--listen with an https:// URL) trust the certificates of this file (default: the system's trust store)",
    )
    tap.add_argument("--log", metavar="FILE", help="write the traffic as JSON Lines (mcp-ref judge reads them)")
    _report_file_options(tap)
    tap.add_argument("-q", "--quiet", action="store_true", help="no findings on stderr as they happen")

    judge = sub.add_parser(
        "judge",
        help="judge a recorded traffic log (JSON Lines of the tap, a JSON list, Claude Desktop or Inspector logs)",
        description="Judge recorded MCP traffic offline, both directions, and report.",
    )
    judge.add_argument("file", help="the traffic log ('-' for standard input)")
    judge.add_argument("--transport", choices=("stdio", "http"), help="how the traffic travelled (if known)")
    judge.add_argument(
        "--as",
        dest="perspective",
        choices=("client", "server"),
        default="client",
        help="whose 'sent' and 'received' the log speaks of (default: client)",
    )
    _output_options(judge)
    _add_explain(sub)


def _add_explain(sub: Any) -> None:
    explain = sub.add_parser(
        "explain",
        help="what a requirement id asks, mcp_ref's note and status for it, and its section on modelcontextprotocol.io",
        description="Print what the requirement ID asks (our words, and the spec's where its catalogue is at hand), "
        "its level, mcp_ref's status for it, the spec section that states it and a link to it. Any revision's ids: "
        "basic/lifecycle#9 (2025-11-25), 2026-07-28:basic/patterns/mrtr#4, ext-tasks:tasks#2; an id without a "
        "revision that 2025-11-25 lacks is looked up in the newest revision that has it.",
    )
    explain.add_argument("id", nargs="+", help="a requirement id (several may be given)")


def _explain(args: argparse.Namespace, out: TextIO) -> int:
    from .explain import explain_text

    for requirement in args.id:
        try:
            out.write(explain_text(requirement))
        except KeyError as e:
            raise UsageError(str(e.args[0])) from None
    return 0


def _report_file_options(parser: argparse.ArgumentParser) -> None:
    """For the commands whose standard streams belong to an MCP session (tap, fixture)."""
    parser.add_argument("--report", metavar="FILE", help="write the text report here at the end")
    parser.add_argument("--json", metavar="FILE", dest="json_file", help="write the JSON report here at the end")
    parser.add_argument("--junit", metavar="FILE", help="write the report as JUnit XML here at the end")
    parser.add_argument("--html", metavar="FILE", help="write the report as one self-contained HTML page at the end")
    parser.add_argument("--strict", action="store_true", help=_STRICT_HELP)


def _write_report_files(report: Report, args: argparse.Namespace) -> None:
    if args.report:
        Path(args.report).write_text(report.to_text(), encoding="utf-8")
    if args.json_file:
        Path(args.json_file).write_text(json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n")
    if args.junit:
        Path(args.junit).write_bytes(report.to_junit(strict=args.strict))
    _write_html(report, args)


_STRICT_HELP = (
    "SHOULD findings fail too: exit status 1, and failures in JUnit (default: only MUST findings fail; "
    "SHOULD findings are reported without failing)"
)


def _output_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print the report as JSON instead of text")
    parser.add_argument("--junit", metavar="FILE", help="also write the report as JUnit XML to FILE")
    parser.add_argument(
        "--html",
        metavar="FILE",
        help="also write the report as one self-contained HTML page: the messages in two lanes, each finding "
        "pinned to the message that shows it and linked to its section of the spec",
    )
    parser.add_argument("--strict", action="store_true", help=_STRICT_HELP)
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")


def _target(args: argparse.Namespace) -> Target:
    words: list[str] = list(args.target)
    if not words:
        raise UsageError("give a URL, or -- and the command that starts the server")
    if len(words) == 1 and words[0].startswith(("http://", "https://")):
        return HttpTarget(words[0], _headers(args.header), _ssl_context(words[0], args.cafile))
    if args.header:
        raise UsageError("--header applies to a URL target only")
    if args.oauth or args.client_credentials or args.cafile:
        raise UsageError("--oauth, --client-credentials and --cafile apply to a URL target only")
    return StdioTarget(words[0], tuple(words[1:]))


def _launchable(command: str) -> str:
    """``command`` if it can be launched; else a one-line UsageError saying what it is not."""
    import os
    import shutil

    if "://" in command:
        raise UsageError(f"{command!r} is not a URL mcp-ref can check (http:// or https://), nor a command")
    if os.sep in command:
        if not os.path.isfile(command):
            raise UsageError(f"{command!r} is neither a URL nor a command: no such file")
        if not os.access(command, os.X_OK):
            raise UsageError(f"{command!r} is neither a URL nor a command: the file is not executable")
        return command
    if shutil.which(command) is None:
        raise UsageError(
            f"{command!r} is neither a URL (http://, https://) nor a command found on PATH; "
            "a stdio server goes after --: mcp-ref check -- COMMAND ARGS..."
        )
    return command


def _ssl_context(url: str, cafile: str | None) -> "ssl.SSLContext | None":
    """The trust for an https:// ``url``: the system's, or ``cafile``'s certificates; None for http://."""
    if not url.startswith("https://"):
        if cafile:
            raise UsageError("--cafile applies to an https:// URL only")
        return None
    import ssl

    try:
        return ssl.create_default_context(cafile=cafile)
    except (OSError, ssl.SSLError) as e:
        raise UsageError(f"--cafile {cafile}: {e}") from None


def _headers(values: list[str]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for value in values:
        name, sep, rest = value.partition(":")
        if not sep or not name.strip():
            raise UsageError(f"--header {value!r}: expected 'Name: value'")
        headers[name.strip()] = rest.strip()
    return headers


def _config(args: argparse.Namespace) -> CheckConfig:
    base = load_config(args.config) if args.config else CheckConfig()
    tools: dict[str, ToolSpec] = {}
    for role in ROLES:
        value = getattr(args, f"{role}_tool")
        if value:
            tools[role] = parse_tool_option(value)
    calls = tuple(parse_tool_option(v) for v in args.call_tool)
    timeout = args.timeout if args.timeout is not None else base.timeout
    if not timeout > 0:
        raise UsageError("--timeout must be positive")
    return base.merged(CheckConfig(tools, calls, timeout, call_all_tools=args.call_all_tools))


def _write_html(report: Report, args: argparse.Namespace) -> None:
    if getattr(args, "html", None):
        from .html import render_html

        Path(args.html).write_text(render_html(report), encoding="utf-8")


def _emit(report: Report, args: argparse.Namespace, out: TextIO) -> int:
    if args.json:
        out.write(json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n")
    else:
        out.write(report.to_text())
    if args.junit:
        Path(args.junit).write_bytes(report.to_junit(strict=args.strict))
    _write_html(report, args)
    return report.exit_status_for(strict=args.strict)


def run(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run one cross-check command; returns the exit status."""
    out = out or sys.stdout
    err = err or sys.stderr
    # the sessions log the peer faults they meet; here the report says them
    logging.getLogger("mcp_ref").addHandler(logging.NullHandler())
    try:
        if args.command == "check":
            return _check(args, out, err)
        if args.command == "judge":
            return _judge(args, out)
        if args.command == "tap":
            return _tap(args, err)
        if args.command == "fixture":
            return _fixture(args, err)
        if args.command == "explain":
            return _explain(args, out)
    except (UsageError, ConfigError) as e:
        err.write(f"mcp-ref {args.command}: {e}\n")
        return EXIT_USAGE
    except TargetUnreachable as e:
        err.write(f"mcp-ref {args.command}: cannot check the target: {e}\n")
        return EXIT_USAGE
    raise AssertionError(args.command)


def _check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .battery import CHAPTERS, run_check

    if args.client:
        from .fixture import FixtureOptions, run_check_client

        if not args.target:
            raise UsageError("give -- and the client command, with {fixture} or {url} where the server goes")
        if not any("{fixture}" in w or "{url}" in w for w in args.target):
            raise UsageError("the client command needs {fixture} (a stdio server command) or {url} (an HTTP URL)")
        timeout = args.timeout if args.timeout is not None else CLIENT_ANSWER_TIMEOUT
        if not timeout > 0:
            raise UsageError("--timeout must be positive")
        if args.client_timeout <= 0:
            raise UsageError("--client-timeout must be a positive number of seconds")
        options = FixtureOptions(timeout=timeout)
        return _emit(run_check_client(args.target, options, client_timeout=args.client_timeout), args, out)
    target = _target(args)
    config = _config(args)
    only = [c.strip() for c in args.only.split(",") if c.strip()] if args.only else None
    if only and (unknown := sorted(set(only) - set(CHAPTERS))):
        raise UsageError(f"--only: unknown chapters {unknown}; known: {', '.join(CHAPTERS)}")
    if isinstance(target, StdioTarget):
        _launchable(target.command)
    if args.revision is not None:
        from .battery import REVISIONS
        from .modern import MODERN

        if args.revision not in (*REVISIONS, MODERN):
            raise UsageError(f"--revision {args.revision}: mcp-ref checks {', '.join((*REVISIONS, MODERN))}")
    say: Callable[[str], None] | None = None if args.quiet else (lambda line: print(line, file=err, flush=True))
    if args.oauth or args.client_credentials:
        if not isinstance(target, HttpTarget):
            raise UsageError("--oauth, --client-credentials and --cafile apply to a URL target only")
        import trio

        return _emit(trio.run(_check_with_oauth, args, target, config, only, say), args, out)
    if args.oauth_client or args.oauth_scope:
        raise UsageError("--oauth-client and --oauth-scope go with --oauth (or --client-credentials)")
    report = run_check(target, config, only=only, on_progress=say, revision=args.revision)
    return _emit(report, args, out)


def _id_and_secret(option: str, value: str, *, secret_required: bool) -> tuple[str, str | None]:
    client_id, sep, secret = value.partition(":")
    if not client_id or (secret_required and not secret):
        raise UsageError(f"{option} {value!r}: expected ID:SECRET" if secret_required else f"{option}: expected ID")
    return client_id, (secret if sep else None)


async def _check_with_oauth(
    args: argparse.Namespace,
    target: HttpTarget,
    config: CheckConfig,
    only: list[str] | None,
    say: Callable[[str], None] | None,
) -> Report:
    """The battery with an ``OAuthClient`` that authorizes when the server asks (a 401)."""
    from contextlib import AsyncExitStack

    from ..basic.authorization.metadata import ClientInformation
    from ..basic.transports.oauth_callback import open_in_browser, open_loopback_callback
    from ..basic.transports.oauth_client import ClientCredentials, OAuthClient
    from .battery import check_server

    async with AsyncExitStack() as stack:
        if args.client_credentials:
            client_id, secret = _id_and_secret("--client-credentials", args.client_credentials, secret_required=True)
            grant = ClientCredentials(client_id=client_id, client_secret=secret)
            auth = OAuthClient(grant=grant, scope=args.oauth_scope, ssl_context=target.ssl_context)
        else:
            callback = await stack.enter_async_context(open_loopback_callback(port=args.oauth_callback_port))
            information = None
            if args.oauth_client:
                client_id, secret = _id_and_secret("--oauth-client", args.oauth_client, secret_required=False)
                information = ClientInformation(client_id=client_id, client_secret=secret)
            auth = OAuthClient(
                redirect_uri=callback.redirect_uri,
                redirect_handler=open_in_browser,
                callback_handler=callback,
                client_name="mcp-ref check",
                client_information=information,
                scope=args.oauth_scope,
                ssl_context=target.ssl_context,
            )
        return await check_server(target, config, only=only, on_progress=say, auth=auth, revision=args.revision)


def _judge(args: argparse.Namespace, out: TextIO) -> int:
    from .judge import judge_file

    try:
        report = judge_file(args.file, transport=args.transport, perspective=args.perspective)
    except OSError as e:
        raise UsageError(f"cannot read {args.file}: {e.strerror or e}") from None
    except ValueError as e:
        raise UsageError(str(e)) from None
    return _emit(report, args, out)


def _tap(args: argparse.Namespace, err: TextIO) -> int:
    from .tap import Tap, finding_line

    words: list[str] = list(args.target)
    if args.listen:
        if len(words) != 1 or not words[0].startswith(("http://", "https://")):
            raise UsageError(
                "--listen forwards to one http:// or https:// URL: mcp-ref tap --listen 127.0.0.1:PORT URL"
            )
        host, sep, port = args.listen.rpartition(":")
        if not sep or not port.isdigit():
            raise UsageError(f"--listen {args.listen!r}: expected HOST:PORT")
        context = _ssl_context(words[0], args.cafile)
    elif args.cafile:
        raise UsageError("--cafile goes with --listen and an https:// URL")
    elif not words:
        raise UsageError("give -- and the command that starts the server (or --listen HOST:PORT URL)")

    def live(finding: Any) -> None:
        if not args.quiet:
            err.write(finding_line(finding) + "\n")
            err.flush()

    log = _own_file(args.log, err) if args.log else None
    try:
        if args.listen:
            from .http_tap import run_http_tap

            tap = Tap(words[0], "http", log=log, on_finding=live)
            code = run_http_tap(host, int(port), words[0], tap, err=err, ssl_context=context)
        else:
            import trio

            from .tap import run_stdio_tap

            tap = Tap(" ".join(words), "stdio", log=log, on_finding=live)
            try:
                code = trio.run(run_stdio_tap, words[0], words[1:], tap)
            except OSError as e:
                raise TargetUnreachable(f"cannot start {words[0]!r}: {e.strerror or e}") from None
    finally:
        if log is not None:
            log.close()
    with _deaf_to_stop_signals():
        # (a second Ctrl-C while --listen shuts down must not cost the report: the traffic is all seen)
        report = tap.end()
        _write_report_files(report, args)
        if not args.quiet:
            err.write(f"mcp-ref tap: {report.summary_line()}\n")
    # stdio: the tap stands in for the server, so its client sees the server's exit status
    return report.exit_status_for(strict=args.strict) if args.listen else code


@contextlib.contextmanager
def _deaf_to_stop_signals() -> Iterator[None]:
    """SIGINT and SIGTERM are ignored inside (main thread only; elsewhere nothing changes)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = {s: signal.signal(s, signal.SIG_IGN) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)


def _own_file(path: str, err: TextIO) -> TextIO:
    """``path`` opened for this spawn alone: a client may start the tap several times with the same
    ``--log``, and each spawn gets its own file (``traffic.jsonl``, then ``traffic.2.jsonl`` ...)."""
    base = Path(path)
    for n in range(1, 10_000):
        candidate = base if n == 1 else base.with_name(f"{base.stem}.{n}{base.suffix}")
        try:
            f = open(candidate, "x", encoding="utf-8")
        except FileExistsError:
            continue
        except OSError as e:
            raise UsageError(f"--log {path}: {e.strerror or e}") from None
        if n > 1:
            err.write(f"mcp-ref tap: {path} is taken (another spawn): logging to {candidate}\n")
        return f
    raise UsageError(f"--log {path}: no free name beside it")


def _fixture(args: argparse.Namespace, err: TextIO) -> int:
    from .fixture import run_fixture

    if not args.timeout > 0:
        raise UsageError("--timeout must be positive")
    if args.port is not None and not args.http:
        raise UsageError("--port goes with --http (without it the fixture serves stdio)")
    if args.port is None:
        args.port = 8000
    if args.stop_after is not None and not args.stop_after > 0:
        raise UsageError("--stop-after must be positive")
    report = run_fixture(args, err)
    _write_report_files(report, args)
    err.write(f"mcp-ref fixture: {report.summary_line()}\n")
    return report.exit_status_for(strict=args.strict)
