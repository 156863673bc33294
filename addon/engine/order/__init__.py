"""Drawing orders: sorting particles by depth and screen-tile lists."""
