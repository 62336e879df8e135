"""A newcomer's app (newcomer/weather.py: three tools -- structured output, progress
and cancellation, elicitation -- a resource template and a prompt, with its tests
in newcomer/test_weather.py), and the same app on the official SDK's high-level
server (newcomer/sdk/): ours is served over stdio and HTTP here, type-checks with
mypy --strict against the installed package, and takes no more lines than the
SDK's; the README records both counts."""

import os
import re
import subprocess
import sys
from pathlib import Path

import trio

from mcp_ref import open_http_client, open_stdio_client, serve_http

from ..conftest import ROOT
from .newcomer.weather import server

APP = Path(__file__).parent / "newcomer"
OURS = [APP / "weather.py", APP / "test_weather.py"]
SDK = [APP / "sdk" / "weather_sdk.py", APP / "sdk" / "test_weather_sdk.py"]
#: the same app mounted in a Starlette site (not counted: the SDK's is not either)
SITE = APP / "website.py"


def code_lines(paths: list[Path]) -> int:
    """Lines that are neither blank nor only a comment, counted the same way for both apps."""
    lines = [line.strip() for path in paths for line in path.read_text().splitlines()]
    return sum(1 for line in lines if line and not line.startswith("#"))


def test_it_takes_no_more_lines_than_on_the_official_sdk() -> None:
    ours, sdk = code_lines(OURS), code_lines(SDK)
    assert ours <= sdk, (ours, sdk)
    recorded = re.search(r"newcomer's app .*?: (\d+) lines with mcp_ref, (\d+) with the official SDK", _readme())
    assert recorded is not None and (int(recorded[1]), int(recorded[2])) == (ours, sdk)


def _readme() -> str:
    return " ".join((ROOT / "README.md").read_text().split())


async def test_it_serves_over_stdio() -> None:
    # a real process: bounded by fail_after
    with trio.fail_after(60):
        async with open_stdio_client(sys.executable, [str(APP / "weather.py")], env=_env()) as client:
            result = await client.call_tool("forecast", {"city": "Oslo"})
    assert result.structured_content == {"city": "Oslo", "celsius": 21.5}


async def test_it_serves_over_http() -> None:
    # what `python weather.py --http` runs (Server.run_http, itself tested on a real
    # process in tests/session/test_run_http.py), on a free port
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            info = await nursery.start(serve_http, server)
            async with open_http_client(info.url) as client:
                result = await client.call_tool("forecast", {"city": "Bergen"})
            await info.aclose()
    assert result.structured_content == {"city": "Bergen", "celsius": 21.5}


async def test_it_mounts_in_a_starlette_site_under_hypercorn() -> None:
    # newcomer/website.py: the same server in an existing web application, as the SDK's mounts
    # in Starlette; served by Hypercorn's trio worker in its own process
    from ..basic.transports.test_asgi import free_port

    port = free_port()
    argv = [sys.executable, "-m", "hypercorn", "-k", "trio", "--bind", f"127.0.0.1:{port}", "website:app"]
    proc = subprocess.Popen(argv, cwd=APP, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        with trio.fail_after(60):
            while True:
                try:
                    await (await trio.open_tcp_stream("127.0.0.1", port)).aclose()
                    break
                except OSError:
                    assert proc.poll() is None, "hypercorn exited"
                    await trio.sleep(0.1)
            async with open_http_client(f"http://127.0.0.1:{port}/mcp") as client:
                result = await client.call_tool("forecast", {"city": "Tromsø"})
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert result.structured_content == {"city": "Tromsø", "celsius": 21.5}


def test_it_passes_mypy_strict_against_the_installed_package(tmp_path: Path) -> None:
    # from outside the checkout, as the newcomer runs it: mcp_ref is found as installed
    # (`make test` installs it so that type checkers see it), not through PYTHONPATH; the
    # website beside the app, as its author runs it there (it imports weather)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    for files, cwd in ((OURS, tmp_path), ([SITE.name], APP)):
        done = subprocess.run(
            [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / "cache"), *map(str, files)],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr


def test_the_sdk_app_is_a_working_equivalent(tmp_path: Path) -> None:
    # the comparison is fair only if the SDK's version works: its tests run as its
    # author would run them (the anyio pytest plugin, real time), apart from ours
    for path in SDK:
        (tmp_path / path.name).write_text(path.read_text())
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "asyncio"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "5 passed" in done.stdout


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}
