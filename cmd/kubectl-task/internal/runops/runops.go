// Package runops is what the plugin does to runs: start one, start one again
// with an earlier run's settings, cancel one, delete one. kubectl task's
// commands and its dashboard both act through it, so that a button and a
// command do the same thing; each says it in its own words (a command names
// the next command to type, a page links to the run).
package runops
