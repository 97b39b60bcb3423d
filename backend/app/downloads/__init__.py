"""Files the control plane offers to nginx hosts: the agent's wheel."""
