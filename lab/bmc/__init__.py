"""The lab's BMCs: Redfish services over captured vendor trees (redfish_lab.py: start/stop; redfish_server.py: the
server) and the IPMI simulator. See lab/README.md."""
