package schema

// Physical bounds of an hwmon reading. A value outside them is not a
// reading but a driver's sentinel or garbage (0x7fffffff millidegrees, an
// unset NVMe threshold of 65535 K): the hwmon source reports it as an
// error, or an absent threshold, and the readers of other tools'
// recordings of the same files drop it, so both record the same values.
const (
	MinTempC  = -273.15
	MaxTempC  = 1000
	MaxFanRPM = 1e6
	MaxPowerW = 1e6
)

// PlausibleTempC reports whether a temperature in °C is within the
// physical bounds [MinTempC, MaxTempC].
func PlausibleTempC(v float64) bool { return v >= MinTempC && v <= MaxTempC }
