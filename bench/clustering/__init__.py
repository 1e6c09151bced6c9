"""bench/cluster.py's parts, one a module: common (paths, names, the machine), processes
(a server process, redis-server commands and sampling), systems (the three systems), scenarios
(the bench and its scenarios), report (cluster.md)."""
