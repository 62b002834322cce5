package main

// The vSphere 4.1 schema, as far as fence_vmware_soap's SOAP library needs it:
// with -wsdl DIR the peer serves DIR's .wsdl/.xsd files at /sdk/NAME (vcsim
// serves none) and cuts from each SOAP answer the elements that schema does
// not know (fields and types added after 4.1, which that library refuses
// with "Type not found"). Only for running the upstream agent side by side;
// fencekit's own tests use the answers as the simulator writes them.

import (
	"bytes"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
)

type xnode struct {
	XMLName xml.Name
	Attrs   []xml.Attr `xml:",any,attr"`
	Kids    []xnode    `xml:",any"`
}

func (n *xnode) attr(name string) string {
	for _, a := range n.Attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

type schema struct {
	fields  map[string]map[string]string // complex type -> element name -> declared type
	base    map[string]string            // complex type -> base type
	simple  map[string]bool
	globals map[string]string // global element -> type (anonymous: "elem:NAME")
}

func local(qname string) string {
	if i := strings.LastIndexByte(qname, ':'); i >= 0 {
		return qname[i+1:]
	}
	return qname
}

// collect gathers the element declarations of a type's content, not
// descending into the elements themselves.
func (s *schema) collect(typ string, n *xnode) {
	for i := range n.Kids {
		k := &n.Kids[i]
		switch k.XMLName.Local {
		case "element":
			if name := k.attr("name"); name != "" {
				s.fields[typ][name] = local(k.attr("type"))
			}
		case "extension", "restriction":
			if b := k.attr("base"); b != "" && k.XMLName.Local == "extension" {
				s.base[typ] = local(b)
			}
			s.collect(typ, k)
		default:
			s.collect(typ, k)
		}
	}
}

func (s *schema) walk(n *xnode, top bool) {
	for i := range n.Kids {
		k := &n.Kids[i]
		switch k.XMLName.Local {
		case "complexType":
			if name := k.attr("name"); name != "" {
				if s.fields[name] == nil {
					s.fields[name] = map[string]string{}
				}
				s.collect(name, k)
			}
		case "simpleType":
			if name := k.attr("name"); name != "" {
				s.simple[name] = true
			}
		case "element":
			name := k.attr("name")
			if name == "" || !top {
				continue
			}
			if t := k.attr("type"); t != "" {
				s.globals[name] = local(t)
			} else {
				syn := "elem:" + name
				s.fields[syn] = map[string]string{}
				s.collect(syn, k)
				s.globals[name] = syn
			}
		case "schema":
			s.walk(k, true)
		default:
			s.walk(k, false)
		}
	}
}

func loadSchema(dir string) (*schema, error) {
	s := &schema{fields: map[string]map[string]string{}, base: map[string]string{},
		simple: map[string]bool{}, globals: map[string]string{}}
	files, _ := filepath.Glob(filepath.Join(dir, "*.xsd"))
	more, _ := filepath.Glob(filepath.Join(dir, "*.wsdl"))
	for _, f := range append(files, more...) {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var root xnode
		if err := xml.Unmarshal(data, &root); err != nil {
			return nil, err
		}
		s.walk(&xnode{Kids: []xnode{root}}, root.XMLName.Local == "schema")
	}
	return s, nil
}

// field finds an element declared in typ or one of its bases.
func (s *schema) field(typ, name string) (string, bool) {
	for i := 0; typ != "" && i < 32; i++ {
		if t, ok := s.fields[typ][name]; ok {
			return t, true
		}
		typ = s.base[typ]
	}
	return "", false
}

var builtin = map[string]bool{"string": true, "boolean": true, "int": true, "long": true,
	"short": true, "byte": true, "float": true, "double": true, "dateTime": true,
	"base64Binary": true, "anyType": true, "anyURI": true, "decimal": true}

const xsiNS = "http://www.w3.org/2001/XMLSchema-instance"

// strip cuts the elements of an answer that the schema does not declare.
func (s *schema) strip(body []byte) []byte {
	d := xml.NewDecoder(bytes.NewReader(body))
	type frame struct {
		local, typ string
	}
	var stack []frame
	var cuts [][2]int64
	for {
		start := d.InputOffset()
		tok, err := d.Token()
		if err != nil {
			break
		}
		switch t := tok.(type) {
		case xml.StartElement:
			typ := ""
			if n := len(stack); n > 0 {
				parent := stack[n-1]
				switch {
				case parent.local == "Body":
					typ = s.globals[t.Name.Local]
				case parent.typ != "" && s.fields[parent.typ] != nil:
					decl, ok := s.field(parent.typ, t.Name.Local)
					if !ok {
						_ = d.Skip()
						cuts = append(cuts, [2]int64{start, d.InputOffset()})
						continue
					}
					xsi := ""
					for _, a := range t.Attr {
						if a.Name.Space == xsiNS && a.Name.Local == "type" {
							xsi = a.Value
						}
					}
					if xsi != "" {
						l := local(xsi)
						switch {
						case s.fields[l] != nil:
							typ = l
						case s.simple[l] || builtin[l]:
						default:
							_ = d.Skip()
							cuts = append(cuts, [2]int64{start, d.InputOffset()})
							continue
						}
					} else if s.fields[decl] != nil {
						typ = decl
					}
				}
			}
			stack = append(stack, frame{t.Name.Local, typ})
		case xml.EndElement:
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		}
	}
	if len(cuts) == 0 {
		return body
	}
	var out bytes.Buffer
	at := int64(0)
	for _, c := range cuts {
		out.Write(body[at:c[0]])
		at = c[1]
	}
	out.Write(body[at:])
	return out.Bytes()
}
