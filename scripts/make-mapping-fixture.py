#!/usr/bin/env python3
"""Writes Tests/Fixtures/MappingModels/People1ToPeople2.cdm: a compiled mapping model
(an NSKeyedArchiver archive of NSMappingModel) from People 1 to People 2.

No Apple-compiled .cdm was found in a permissively licensed public repository, so this one is
written by hand in the keyed-archive format. The NSMappingModel root key (NSEntityMappings) is
reported by FreeCoreData; the NSEntityMapping / NSPropertyMapping keys and the
NSFetchRequestExpression keys are Faultline's reading (Documentation/Migration.md, "Mapping
models"). Version hashes: `faultline model Tests/Fixtures/MappingModels/People.xcdatamodeld
--version "People N" --hashes`.

Usage: scripts/make-mapping-fixture.py   (from the package root)
"""
import base64, plistlib

HASHES = {
    "Person": "4V6O8476KunT9E8kdMYzxoWZ/5bykvzqRItbo9tP7XU=",
    "Pet": "A4jNynAeMu7kuqEHC7Olf8VyD3Tu9XyziMqEiWqfna8=",
    "Legacy": "SHh/fCbHZiDlGMOFp/bsBTp3qdCv/hNTWPkETMTJK5U=",
    "Contact": "sFQR9oEbnCpOEiHeg8vLcnAXT6IpdSt+Bv23wRzHQBc=",
    "Animal": "MULClUJygBqc1OX/xXWrfDr4rjoT+5fvhG02bIyYpEQ=",
    "Tag": "zuIY0m0eZC5W7Vua54c3zrGdw0rLKs0wcFMcr9xfLK8=",
}


class Archive:
    def __init__(self):
        self.objects = ["$null"]
        self.classes = {}

    def add(self, obj):
        self.objects.append(obj)
        return plistlib.UID(len(self.objects) - 1)

    def cls(self, chain):
        if chain[0] not in self.classes:
            self.classes[chain[0]] = self.add({"$classname": chain[0], "$classes": chain})
        return self.classes[chain[0]]

    def obj(self, chain, fields):
        d = dict(fields)
        d["$class"] = self.cls(chain)
        return self.add(d)

    def array(self, items):
        return self.obj(["NSArray", "NSObject"], {"NS.objects": items})

    # Expressions, in the shapes of NSExpression's archives.
    def var(self, name):
        return self.obj(["NSVariableExpression", "NSExpression", "NSObject"], {"NSExpressionType": 2, "NSVariable": self.add(name)})

    def const(self, value):
        return self.obj(["NSConstantValueExpression", "NSExpression", "NSObject"], {"NSExpressionType": 0, "NSConstantValue": self.add(value)})

    def keypath(self, operand, path):
        spec = self.obj(["NSKeyPathSpecifierExpression", "NSExpression", "NSObject"], {"NSExpressionType": 10, "NSKeyPath": self.add(path)})
        return self.obj(["NSKeyPathExpression", "NSFunctionExpression", "NSExpression", "NSObject"],
                        {"NSExpressionType": 3, "NSOperand": operand, "NSSelectorName": self.add("valueForKeyPath:"), "NSArguments": self.array([spec])})

    def function(self, operand, selector, args):
        return self.obj(["NSFunctionExpression", "NSExpression", "NSObject"],
                        {"NSExpressionType": 4, "NSOperand": operand, "NSSelectorName": self.add(selector), "NSArguments": self.array(args)})

    def builtin(self, selector, args):
        return self.function(self.const("NSPredicateUtilities"), selector, args)

    def fetch(self, entity):
        request = self.function(self.var("manager"), "fetchRequestForSourceEntityNamed:predicateString:",
                                [self.const(entity), self.const("TRUEPREDICATE")])
        return self.obj(["NSFetchRequestExpression", "NSExpression", "NSObject"],
                        {"NSExpressionType": 50, "NSRequest": request, "NSContext": self.keypath(self.var("manager"), "sourceContext"), "NSIsCountOnly": False})

    def source(self, path):
        return self.keypath(self.var("source"), path)

    def through(self, mapping, path):
        return self.function(self.var("manager"), "destinationInstancesForEntityMappingNamed:sourceInstances:",
                             [self.const(mapping), self.source(path)])

    def prop(self, name, value):
        fields = {"NSPropertyName": self.add(name)}
        if value is not None:
            fields["NSValueExpression"] = value
        return self.obj(["NSPropertyMapping", "NSObject"], fields)

    def entity(self, name, kind, src, dst, attributes=(), relationships=(), policy=None):
        fields = {"NSMappingName": self.add(name), "NSMappingType": kind,
                  "NSAttributeMappings": self.array(list(attributes)), "NSRelationshipMappings": self.array(list(relationships))}
        if src:
            fields["NSSourceEntityName"] = self.add(src)
            fields["NSSourceEntityVersionHash"] = self.add(base64.b64decode(HASHES[src]))
            fields["NSSourceExpression"] = self.fetch(src)
        if dst:
            fields["NSDestinationEntityName"] = self.add(dst)
            fields["NSDestinationEntityVersionHash"] = self.add(base64.b64decode(HASHES[dst]))
        if policy:
            fields["NSEntityMigrationPolicyClassName"] = self.add(policy)
        return self.obj(["NSEntityMapping", "NSObject"], fields)


a = Archive()
root = a.add(None)  # reserved: the root comes first, as NSKeyedArchiver writes it
ADD, REMOVE, TRANSFORM = 2, 3, 5
mappings = [
    a.entity("PersonToContact", TRANSFORM, "Person", "Contact",
             attributes=[
                 a.prop("name", a.source("firstName")),
                 a.prop("age", a.source("age")),
                 a.prop("ageNextYear", a.builtin("add:to:", [a.source("age"), a.const(1)])),
                 a.prop("email", a.builtin("uppercase:", [a.source("email")])),
                 a.prop("createdBy", a.const("migration")),
             ],
             relationships=[a.prop("animals", a.through("PetToAnimal", "pets"))]),
    a.entity("PetToAnimal", TRANSFORM, "Pet", "Animal",
             attributes=[a.prop("name", a.source("name"))],
             relationships=[a.prop("keeper", a.through("PersonToContact", "owner"))]),
    a.entity("Legacy", REMOVE, "Legacy", None),
    a.entity("Tag", ADD, None, "Tag", attributes=[a.prop("label", None)]),
]
a.objects[root.data] = {"NSEntityMappings": a.array(mappings), "$class": a.cls(["NSMappingModel", "NSObject"])}
archive = {"$version": 100000, "$archiver": "NSKeyedArchiver", "$top": {"root": root}, "$objects": a.objects}
with open("Tests/Fixtures/MappingModels/People1ToPeople2.cdm", "wb") as f:
    plistlib.dump(archive, f, fmt=plistlib.FMT_BINARY, sort_keys=True)
