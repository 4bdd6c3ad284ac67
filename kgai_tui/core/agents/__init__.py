"""What coding agents are told, and when: the capture policy and the hooks' answers."""
