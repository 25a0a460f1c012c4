"""Executing campaigns: runner.campaign orchestrates targets, runner.session drives one server."""
from dbdrift.runner.campaign import VERSION, CampaignOutcome, Runner, host_info

__all__ = ["VERSION", "CampaignOutcome", "Runner", "host_info"]
