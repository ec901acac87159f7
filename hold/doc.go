// Package hold holds a component's temperature at a set point by pacing the
// job that heats it (heatsink run --hold): a model-based controller that
// chooses the job's duty each tick, the duty cycle that stops and continues
// the job between ticks, and simulated plants (an H100, a tank's coolant in
// the tests) to try the controller in sim time. It never touches a card's
// settings. docs/hold.md gives the design and the simulations behind it.
package hold
