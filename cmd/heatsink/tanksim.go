package main

import (
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/heatsink-hpc/heatsink/sensors/tank/sim"
	"github.com/spf13/cobra"
)

func newTankSimCmd() *cobra.Command {
	xf := tankSimFlags{p: sim.DefaultParams()}
	p := &xf.p
	cmd := &cobra.Command{
		Use:   "tank-sim",
		Short: "Serve a simulated immersion tank through the Submer SmartPod API",
		Long:  tankSimLong,
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return runTankSim(cmd, args, &xf) },
	}
	f := cmd.Flags()
	f.StringVar(&xf.listen, "listen", "127.0.0.1:18080", "address to serve on")
	f.Float64Var(&xf.speed, "speed", 1, "simulated seconds per real second")
	f.Uint64Var(&xf.seed, "seed", 1, "random seed (sensor noise, water inlet drift): same seed, same run")
	f.StringVar(&xf.profile, "profile", "", "follow the IT load profile in this file (lines: OFFSET LOAD_W)")
	f.BoolVar(&xf.chilledWater, "chilled-water", true, "facility chilled water connected")
	f.BoolVar(&xf.demo, "demo", false, "start the controller in demo mode (pumps stop, display looks normal)")
	f.StringVar(&xf.mode, "mode", "normal", "controller mode shown by the API")
	f.Float64Var(&p.LoadW, "load-w", p.LoadW, "IT load immersed in the tank, W")
	f.Float64Var(&p.VolumeL, "volume-l", p.VolumeL, "coolant volume, L")
	f.Float64Var(&p.DensityKgM3, "density", p.DensityKgM3, "coolant density, kg/m³")
	f.Float64Var(&p.SpecificHeatJKgK, "specific-heat", p.SpecificHeatJKgK, "coolant specific heat, J/(kg·K)")
	f.Float64Var(&p.UAWK, "ua-w-k", p.UAWK, "heat exchanger UA, W/K")
	f.Float64Var(&p.WaterInC, "water-in-c", p.WaterInC, "chilled water inlet temperature, °C")
	f.Float64Var(&p.WaterInDriftC, "water-in-drift-c", p.WaterInDriftC, "bound of the inlet temperature's drift, K")
	f.Float64Var(&p.WaterFlowLpm, "water-flow-lpm", p.WaterFlowLpm, "chilled water flow, L/min")
	f.StringVar(&p.WaterFlowUnit, "water-flow-unit", p.WaterFlowUnit, "unit the API reports wf in: L/min or m3/h")
	f.IntVar(&p.Pumps, "pumps", p.Pumps, "number of coolant pumps")
	f.Float64Var(&p.PumpFlowLpm, "pump-flow-lpm", p.PumpFlowLpm, "coolant flow per pump, L/min")
	f.Float64Var(&p.PumpPowerW, "pump-power-w", p.PumpPowerW, "electrical power per pump, W")
	f.Float64Var(&p.SetpointC, "setpoint-c", p.SetpointC, "pumps start at this coolant temperature, °C")
	f.Float64Var(&p.HysteresisC, "hysteresis-c", p.HysteresisC, "pumps stop this far below the setpoint, K")
	f.Float64Var(&p.AlarmC, "alarm-c", p.AlarmC, "alarm threshold, °C")
	f.DurationVar(&p.MinCirculationEvery, "min-circulation-every", p.MinCirculationEvery, "minimum circulation period")
	f.DurationVar(&p.MinCirculationFor, "min-circulation-for", p.MinCirculationFor, "minimum circulation run length (0: off)")
	f.Float64Var(&p.AmbientC, "ambient-c", p.AmbientC, "room temperature, °C")
	f.Float64Var(&p.AmbientUAWK, "ambient-ua-w-k", p.AmbientUAWK, "tank walls' conductance to the room, W/K")
	f.Float64Var(&p.InitialC, "initial-c", p.InitialC, "coolant temperature at start, °C")
	return cmd
}

// tankSimFlags are the command's flags.
type tankSimFlags struct {
	p                     sim.Params
	listen, profile, mode string
	speed                 float64
	seed                  uint64
	chilledWater, demo    bool
}

func runTankSim(cmd *cobra.Command, args []string, xf *tankSimFlags) error {
	p := xf.p
	m, err := sim.New(p, xf.seed)
	if err != nil {
		return err
	}
	if xf.profile != "" {
		f, err := os.Open(xf.profile)
		if err != nil {
			return fmt.Errorf("load profile: %w", err)
		}
		prof, err := sim.ParseProfile(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", xf.profile, err)
		}
		m.FollowProfile(prof)
	}
	if err := (sim.Control{ChilledWater: &xf.chilledWater, Demo: &xf.demo, Mode: &xf.mode}).Apply(m); err != nil {
		return err
	}
	srv, err := sim.NewServer(m, xf.speed)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", xf.listen)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Fprintf(cmd.ErrOrStderr(), "tank-sim: serving http://%s/api/realTime (speed %gx, seed %d, %.0f L, C = %.3g J/K)\n",
		ln.Addr(), xf.speed, xf.seed, p.VolumeL, p.HeatCapacity())
	return sim.Serve(ctx, ln, srv)
}

const tankSimLong = `tank-sim runs a physical model of a single-phase immersion tank (lumped
coolant mass, IT load, chilled-water heat exchanger, pumps on a setpoint with
hysteresis and minimum circulation, wall losses) and serves it as a Submer
SmartPod does: GET /api/realTime. The model's equations are documented in the
sensors/tank/sim package.

Control it while it runs:
  curl -X POST localhost:18080/sim/control -d '{"load_w": 2400}'
  curl -X POST localhost:18080/sim/control -d '{"chilled_water": false}'
  curl -X POST localhost:18080/sim/control -d '{"demo": true}'
  curl -X PUT  localhost:18080/sim/profile --data-binary @load.profile
  curl localhost:18080/sim/state        # the real state the pod does not show`
