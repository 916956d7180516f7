// Command cni is the real node's network plugin (CNI), installed twice: as
// "loopback", which containerd calls for every Pod's lo, and as
// "minitask-isolated", the Pod network. It gives a Pod a network that ends
// inside the Pod: eth0 with an address, whose veth peer stays in the same
// network namespace, and no route. A Pod has an IP the API server can show,
// and its containers reach loopback and nothing else: no traffic ever leaves
// the Pod, so tests on a shared machine cannot reach anything but themselves.
//
// Addresses come from the subnet of the network's configuration, one file per
// address in dataDir (created with O_EXCL, so two Pods never share one). Every
// ADD also records its network namespace in dataDir/netns/, and DEL keeps that
// record: the runtime removes a namespace only when it removes the sandbox,
// which may never happen if the node stops first, so deleting the cluster
// removes every recorded namespace that is still there.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/containernetworking/cni/pkg/skel"
	"github.com/containernetworking/cni/pkg/types"
	current "github.com/containernetworking/cni/pkg/types/100"
	"github.com/containernetworking/cni/pkg/version"
	"github.com/containernetworking/plugins/pkg/ns"
	"github.com/vishvananda/netlink"
)

// peerName is eth0's other end, which stays inside the Pod.
const peerName = "minitask-peer"

// netConf is the network's configuration: the common fields, the subnet Pod
// addresses come from and where they are recorded.
type netConf struct {
	types.NetConf
	Subnet  string `json:"subnet"`
	DataDir string `json:"dataDir"`
}

func main() {
	skel.PluginMainFuncs(skel.CNIFuncs{Add: add, Del: del, Check: check},
		version.All, "minitask-isolated: a Pod network that stays inside the Pod")
}

func add(args *skel.CmdArgs) error {
	conf, err := parse(args.StdinData)
	if err != nil {
		return err
	}
	if conf.Type == "loopback" {
		if err := ns.WithNetNSPath(args.Netns, func(ns.NetNS) error { return up("lo") }); err != nil {
			return fmt.Errorf("bringing up lo in %s: %w", args.Netns, err)
		}
		return types.PrintResult(&current.Result{CNIVersion: current.ImplementedSpecVersion}, conf.CNIVersion)
	}
	if err := recordNetns(conf, args.ContainerID, args.Netns); err != nil {
		return err
	}
	addr, err := allocate(conf, args.ContainerID)
	if err != nil {
		return err
	}
	var mac string
	err = ns.WithNetNSPath(args.Netns, func(ns.NetNS) error {
		veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: args.IfName}, PeerName: peerName}
		if err := netlink.LinkAdd(veth); err != nil {
			return fmt.Errorf("adding %s: %w", args.IfName, err)
		}
		link, err := netlink.LinkByName(args.IfName)
		if err != nil {
			return err
		}
		if err := netlink.AddrAdd(link, &netlink.Addr{IPNet: addr}); err != nil {
			return fmt.Errorf("adding %s to %s: %w", addr, args.IfName, err)
		}
		mac = link.Attrs().HardwareAddr.String()
		if err := up(peerName); err != nil {
			return err
		}
		return up(args.IfName)
	})
	if err != nil {
		// The address goes back; the runtime calls DEL for what is left.
		return errors.Join(fmt.Errorf("setting up %s in %s: %w", args.IfName, args.Netns, err),
			release(conf, args.ContainerID))
	}
	iface := 0
	return types.PrintResult(&current.Result{
		CNIVersion: current.ImplementedSpecVersion,
		Interfaces: []*current.Interface{{Name: args.IfName, Mac: mac, Sandbox: args.Netns}},
		IPs:        []*current.IPConfig{{Interface: &iface, Address: *addr}},
	}, conf.CNIVersion)
}

// del releases the Pod's address and record. The namespace itself, and the
// links in it, go when the runtime removes the namespace; if it is still
// there, eth0 is deleted so that a repeated ADD finds no leftover.
func del(args *skel.CmdArgs) error {
	conf, err := parse(args.StdinData)
	if err != nil {
		return err
	}
	if conf.Type == "loopback" {
		return nil
	}
	if args.Netns != "" {
		_ = ns.WithNetNSPath(args.Netns, func(ns.NetNS) error {
			if link, err := netlink.LinkByName(args.IfName); err == nil {
				return netlink.LinkDel(link)
			}
			return nil
		})
	}
	return release(conf, args.ContainerID)
}

func check(args *skel.CmdArgs) error {
	conf, err := parse(args.StdinData)
	if err != nil || conf.Type == "loopback" {
		return err
	}
	return ns.WithNetNSPath(args.Netns, func(ns.NetNS) error {
		_, err := netlink.LinkByName(args.IfName)
		return err
	})
}

func parse(data []byte) (*netConf, error) {
	conf := &netConf{}
	if err := json.Unmarshal(data, conf); err != nil {
		return nil, fmt.Errorf("reading the network configuration: %w", err)
	}
	if conf.Type != "loopback" && (conf.Subnet == "" || conf.DataDir == "") {
		return nil, errors.New("the network configuration needs subnet and dataDir")
	}
	return conf, nil
}

func up(name string) error {
	link, err := netlink.LinkByName(name)
	if err != nil {
		return fmt.Errorf("finding %s: %w", name, err)
	}
	return netlink.LinkSetUp(link)
}

// recordNetns notes that container's sandbox has the network namespace netns.
func recordNetns(conf *netConf, container, netns string) error {
	dir := filepath.Join(conf.DataDir, "netns")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, container), []byte(netns+"\n"), 0o600)
}

// allocate claims the first free address of the subnet for container.
func allocate(conf *netConf, container string) (*net.IPNet, error) {
	_, subnet, err := net.ParseCIDR(conf.Subnet)
	if err != nil {
		return nil, fmt.Errorf("subnet %q: %w", conf.Subnet, err)
	}
	ip4 := subnet.IP.To4()
	if ip4 == nil {
		return nil, fmt.Errorf("subnet %q is not IPv4", conf.Subnet)
	}
	if err := os.MkdirAll(conf.DataDir, 0o700); err != nil {
		return nil, err
	}
	ones, bits := subnet.Mask.Size()
	size := uint32(1) << (bits - ones)
	base := uint32(ip4[0])<<24 | uint32(ip4[1])<<16 | uint32(ip4[2])<<8 | uint32(ip4[3])
	for i := uint32(2); i < size-1; i++ {
		n := base + i
		ip := net.IPv4(byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
		f, err := os.OpenFile(filepath.Join(conf.DataDir, ip.String()), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		_, err = fmt.Fprintf(f, "%s\n", container)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, err
		}
		return &net.IPNet{IP: ip, Mask: subnet.Mask}, nil
	}
	return nil, fmt.Errorf("no free address in %s", conf.Subnet)
}

// release removes the record of container's address, if any.
func release(conf *netConf, container string) error {
	entries, err := os.ReadDir(conf.DataDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		path := filepath.Join(conf.DataDir, e.Name())
		b, err := os.ReadFile(path)
		if err == nil && strings.SplitN(string(b), "\n", 2)[0] == container {
			return os.Remove(path)
		}
	}
	return nil
}
