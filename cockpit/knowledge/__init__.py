"""Data files, not code: metric profiles, Xid catalogue, clock-event reasons, playbook
checklists and UI messages, all in zh and en. Each file cites its sources."""
