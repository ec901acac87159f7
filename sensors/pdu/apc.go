package pdu

import (
	"fmt"
	"strconv"

	"github.com/heatsink-hpc/heatsink/point/schema"
	"github.com/heatsink-hpc/heatsink/sensors/units"
)

// Presets for APC PowerNet-MIB (enterprise 318). Units as the MIB defines them.
const (
	// PresetAPCRPDU2 reads the rPDU2 tables of current APC Switched and
	// Metered Rack PDUs (AP8xxx): per-phase current and power, per-bank
	// current, and device power and energy.
	PresetAPCRPDU2 = "apc-rpdu2"
	// PresetAPCRPDU reads the legacy rPDULoadStatusLoad of AP78xx-era units,
	// which report current only; power is derived from the configured voltage.
	PresetAPCRPDU = "apc-rpdu"
)

const (
	apc = ".1.3.6.1.4.1.318.1.1"
	// rPDU2DeviceStatusPower: device load in hundredths of kW (index 1: the
	// first PDU of a daisy chain).
	oidRPDU2DeviceStatusPower = apc + ".26.4.3.1.5"
	// rPDU2DeviceStatusEnergy: energy since its last reset in tenths of kWh.
	oidRPDU2DeviceStatusEnergy = apc + ".26.4.3.1.9"
	// rPDU2PhaseStatusCurrent: phase current in tenths of A.
	oidRPDU2PhaseStatusCurrent = apc + ".26.6.3.1.5"
	// rPDU2PhaseStatusPower: phase power in hundredths of kW.
	oidRPDU2PhaseStatusPower = apc + ".26.6.3.1.7"
	// rPDU2BankStatusCurrent: bank current in tenths of A.
	oidRPDU2BankStatusCurrent = apc + ".26.8.3.1.5"
	// rPDULoadStatusLoad: legacy phase/bank load in tenths of A.
	oidRPDULoadStatusLoad = apc + ".12.2.3.1.1.2"
)

// presetOIDs expands a preset into generic OID readings.
func presetOIDs(c Config) []OID {
	var out []OID
	idx := func(base string, n int) string { return base + "." + strconv.Itoa(n) }
	switch c.Preset {
	case PresetAPCRPDU2:
		if c.Device == nil || *c.Device {
			out = append(out,
				OID{OID: idx(oidRPDU2DeviceStatusPower, 1), Field: schema.FieldPowerW, Unit: "kW", Scale: 0.01, Name: "rPDU2DeviceStatusPower.1"},
				OID{OID: idx(oidRPDU2DeviceStatusEnergy, 1), Field: schema.FieldEnergyJ, Unit: "kWh", Scale: 0.1, Name: "rPDU2DeviceStatusEnergy.1"})
		}
		for p := 1; p <= c.Phases; p++ {
			out = append(out,
				OID{OID: idx(oidRPDU2PhaseStatusCurrent, p), Field: schema.FieldCurrentA, Unit: "A", Scale: 0.1, Phase: p, Name: fmt.Sprintf("rPDU2PhaseStatusCurrent.%d", p)},
				OID{OID: idx(oidRPDU2PhaseStatusPower, p), Field: schema.FieldPowerW, Unit: "kW", Scale: 0.01, Phase: p, Name: fmt.Sprintf("rPDU2PhaseStatusPower.%d", p)})
		}
		for b := 1; b <= c.Banks; b++ {
			out = append(out,
				OID{OID: idx(oidRPDU2BankStatusCurrent, b), Field: schema.FieldCurrentA, Unit: "A", Scale: 0.1, Bank: b, Name: fmt.Sprintf("rPDU2BankStatusCurrent.%d", b)})
		}
	case PresetAPCRPDU:
		// rPDULoadStatusTable lists the phases first, then the banks.
		for p := 1; p <= c.Phases; p++ {
			out = append(out,
				OID{OID: idx(oidRPDULoadStatusLoad, p), Field: schema.FieldCurrentA, Unit: "A", Scale: 0.1, Phase: p, Name: fmt.Sprintf("rPDULoadStatusLoad.%d", p)})
		}
		for b := 1; b <= c.Banks; b++ {
			n := c.Phases + b
			out = append(out,
				OID{OID: idx(oidRPDULoadStatusLoad, n), Field: schema.FieldCurrentA, Unit: "A", Scale: 0.1, Bank: b, Name: fmt.Sprintf("rPDULoadStatusLoad.%d", n)})
		}
	}
	return out
}

// compile turns the configured readings into the sample plan.
func compile(c Config) ([]reading, []group, error) {
	oids := append(presetOIDs(c), c.OIDs...)
	var rs []reading
	var gs []group
	gidx := map[string]int{}
	seen := map[string]bool{}
	for _, o := range oids {
		oid := o.OID
		if oid[0] != '.' {
			oid = "." + oid
		}
		if seen[oid] {
			return nil, nil, fmt.Errorf("OID %s is read twice (preset and oids?)", oid)
		}
		seen[oid] = true
		conv, err := units.Converter(o.Unit, o.Field, o.Scale)
		if err != nil {
			return nil, nil, fmt.Errorf("OID %s: %w", oid, err)
		}
		key, val := "", ""
		switch {
		case o.Phase > 0:
			key, val = "phase", strconv.Itoa(o.Phase)
		case o.Bank > 0:
			key, val = "bank", strconv.Itoa(o.Bank)
		case o.Outlet > 0:
			key, val = "outlet", strconv.Itoa(o.Outlet)
		}
		g, ok := gidx[key+"="+val]
		if !ok {
			g = len(gs)
			gidx[key+"="+val] = g
			gs = append(gs, group{tagKey: key, tagValue: val})
		}
		for _, r := range rs {
			if r.group == g && r.field == o.Field {
				return nil, nil, fmt.Errorf("OID %s and %s both give %s of the same %s", r.oid, oid, o.Field, groupName(gs[g]))
			}
		}
		switch o.Field {
		case schema.FieldCurrentA:
			gs[g].current = true
		case schema.FieldPowerW:
			gs[g].power = true
		}
		name := o.Name
		if name == "" {
			name = oid
		}
		rs = append(rs, reading{oid: oid, name: name, field: o.Field, conv: conv, group: g})
	}
	return rs, gs, nil
}

func groupName(g group) string {
	if g.tagKey == "" {
		return "device"
	}
	return g.tagKey + " " + g.tagValue
}
