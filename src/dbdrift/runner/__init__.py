"""Executing campaigns: runner.campaign orchestrates targets, runner.session drives one server."""
from dbdrift.runner.campaign import VERSION, CampaignOutcome, Runner, host_info
from dbdrift.runner.session import load_phases

__all__ = ["VERSION", "CampaignOutcome", "Runner", "host_info", "load_phases"]
