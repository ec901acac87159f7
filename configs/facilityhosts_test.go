package configs_test

import (
	"strings"
	"testing"

	"github.com/heatsink-hpc/heatsink/configs"
	_ "github.com/heatsink-hpc/heatsink/node" // registers every source and section
)

func TestFacilityHostsSelectWhoPollsSharedDevices(t *testing.T) {
	c, err := configs.Parse("site.yaml", []byte("sources:\n  facility_hosts: [node1, node2]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !c.Sources.PollsFacility("node2") || c.Sources.PollsFacility("node3") {
		t.Errorf("facility hosts %v", c.Sources.FacilityHosts)
	}
	if !configs.Default().Sources.PollsFacility("any") {
		t.Error("with no facility_hosts every host must poll its configured devices")
	}
	_, err = configs.Parse("site.yaml", []byte("sources:\n  facility_hosts:\n    - node1\n    - \"node2, node3\"\n"))
	if err == nil || !strings.Contains(err.Error(), "site.yaml:4: sources.facility_hosts.1") {
		t.Errorf("a list in one entry: %v", err)
	}
}
