"""Command line: `run`, `collect --once`, `enroll`, `check`."""

from __future__ import annotations

import argparse
import json
import logging
import signal
import socket
import sys
import time
import uuid
from pathlib import Path
from types import FrameType

from nginx_fleet_agent import __version__
from nginx_fleet_agent.agent import Agent
from nginx_fleet_agent.config import AgentConfig, ConfigError, load_config, parse_label
from nginx_fleet_agent.payload import build_payload
from nginx_fleet_agent.sampler import Sampler
from nginx_fleet_agent.spool import peek_next_seq
from nginx_fleet_agent.state import AgentState, StateError, load_state, read_agent_id, save_state
from nginx_fleet_agent.transport import Transport, TransportError, make_verify

log = logging.getLogger("nginx_fleet_agent")

UNENROLLED_AGENT_ID = "unenrolled"


class CommandError(Exception):
    """A command failed in a way the operator can act on."""


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `nginx-fleet-agent` console script."""
    args = _parser().parse_args(argv)
    try:
        config = load_config(args.config)
        logging.basicConfig(
            level=config.log_level.upper(),
            format="%(asctime)s %(levelname)s %(name)s: %(message)s",
            stream=sys.stderr,
        )
        # httpx logs every request at INFO: one line per push would drown the agent's own log.
        logging.getLogger("httpx").setLevel(logging.WARNING)
        result: int = args.handler(args, config)
        return result
    except (ConfigError, StateError, TransportError, CommandError) as exc:
        print(f"nginx-fleet-agent: error: {exc}", file=sys.stderr)
        return 1


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nginx-fleet-agent", description="nginx-fleet agent: metrics and config of nginx."
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument(
        "--config", type=Path, help="TOML config file (default /etc/nginx-fleet-agent/agent.toml)"
    )
    commands = parser.add_subparsers(dest="command", required=True)

    run = commands.add_parser("run", help="collect and push in the foreground until stopped")
    run.set_defaults(handler=_run)

    collect = commands.add_parser("collect", help="print the push payload without sending it")
    collect.add_argument("--once", action="store_true", required=True, help="one sample, then exit")
    collect.add_argument(
        "--window", type=float, default=1.0, help="seconds over which CPU use is measured"
    )
    collect.set_defaults(handler=_collect)

    enroll = commands.add_parser("enroll", help="exchange an enrolment token for a host token")
    enroll.add_argument("--server", required=True, help="control plane URL")
    enroll.add_argument("--token", required=True, help="enrolment token (nfe_...)")
    enroll.add_argument(
        "--label", action="append", default=[], metavar="KEY=VALUE", help="label (repeatable)"
    )
    enroll.set_defaults(handler=_enroll)

    check = commands.add_parser("check", help="authenticate against the server and report")
    check.set_defaults(handler=_check)
    return parser


def _run(args: argparse.Namespace, config: AgentConfig) -> int:
    state = load_state(config.state_file)
    agent = Agent(config, state)

    def stop(signum: int, frame: FrameType | None) -> None:
        log.info("received %s, stopping", signal.Signals(signum).name)
        agent.stop_event.set()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    agent.run()
    return 0


def _collect(args: argparse.Namespace, config: AgentConfig) -> int:
    sampler = Sampler(config)
    try:
        # CPU percentages need two readings; the sampler took the first one when it started.
        time.sleep(max(args.window, 0.0))
        sample = {"seq": peek_next_seq(config.spool_file), **sampler.sample()}
    finally:
        sampler.close()
    payload = build_payload(
        agent_id=read_agent_id(config.state_file) or UNENROLLED_AGENT_ID,
        hostname=sampler.hostname,
        labels=config.labels,
        samples=[sample],
        facts=sampler.facts,
        config=sampler.config,
        include_config_dump=True,
    )
    if sampler.config_collector.error:
        log.warning("config not read: %s", sampler.config_collector.error)
    json.dump(payload, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


def _previous_state(path: Path) -> AgentState | None:
    """The state of an earlier enrolment, or None when there is none (or it is unreadable)."""
    try:
        return load_state(path)
    except StateError:
        return None


def _enroll(args: argparse.Namespace, config: AgentConfig) -> int:
    labels = dict(config.labels)
    labels.update(parse_label(item) for item in args.label)
    previous = _previous_state(config.state_file)
    agent_id = previous.agent_id if previous else str(uuid.uuid4())
    hostname = config.hostname or socket.gethostname()
    # Re-enrolling an enrolled agent proves it is that host with its current token; the token
    # goes only to the server it was issued by.
    proof = previous.host_token if previous and previous.server == args.server.rstrip("/") else None
    transport = Transport(
        args.server,
        timeout_s=config.request_timeout_s,
        verify=make_verify(config.tls_verify, config.ca_file),
        token=proof,
    )
    try:
        reply = transport.enroll(
            {
                "enrollment_token": args.token,
                "agent_id": agent_id,
                "hostname": hostname,
                "labels": labels,
            }
        )
    finally:
        transport.close()
    try:
        state = AgentState(
            agent_id=agent_id,
            host_id=int(reply["host_id"]),
            host_token=str(reply["host_token"]),
            server=args.server.rstrip("/"),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise CommandError(f"enrolment reply is missing host_id/host_token ({exc!r})") from exc
    try:
        save_state(config.state_file, state)
    except OSError as exc:
        raise CommandError(f"cannot write {config.state_file}: {exc.strerror}") from exc
    print(f"enrolled as host {state.host_id} (agent {agent_id}); state in {config.state_file}")
    return 0


def _check(args: argparse.Namespace, config: AgentConfig) -> int:
    state = load_state(config.state_file)
    server = config.server_url or state.server
    transport = Transport(
        server,
        timeout_s=config.request_timeout_s,
        verify=make_verify(config.tls_verify, config.ca_file),
        token=state.host_token,
    )
    try:
        reply = transport.ping()
    finally:
        transport.close()
    print(json.dumps({"server": server, "agent_id": state.agent_id, **reply}))
    return 0 if reply.get("ok") else 1
