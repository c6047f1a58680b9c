"""The functions the sample gateway config (servers.json, tools.yaml) runs."""
