"""Findings rendered for people, agents and services: text, agent lines, SARIF, HTML, baselines."""
