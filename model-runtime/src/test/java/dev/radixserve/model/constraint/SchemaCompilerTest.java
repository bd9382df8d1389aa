package dev.radixserve.model.constraint;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dk.brics.automaton.Automaton;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** Schema to byte automaton: which JSON texts each schema accepts and which it rejects. */
class SchemaCompilerTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  static JsonNode schema(String json) {
    try {
      return JSON.readTree(json.replace('\'', '"'));
    } catch (Exception e) {
      throw new IllegalArgumentException(e);
    }
  }

  /** The text's UTF-8 bytes as dk.brics characters 0..255. */
  static boolean accepts(Automaton a, String text) {
    byte[] b = text.getBytes(StandardCharsets.UTF_8);
    StringBuilder sb = new StringBuilder();
    for (byte x : b) {
      sb.append((char) (x & 0xFF));
    }
    return a.run(sb.toString());
  }

  private static void check(String schema, String[] accepted, String[] rejected) {
    Automaton a = SchemaCompiler.compile(schema(schema));
    for (String s : accepted) {
      assertTrue(accepts(a, s.replace('\'', '"')), schema + " should accept " + s);
    }
    for (String s : rejected) {
      assertFalse(accepts(a, s.replace('\'', '"')), schema + " should reject " + s);
    }
  }

  @Test
  void strictObject() {
    check("{'type':'object','properties':{'name':{'type':'string'},'age':{'type':'integer'}},"
            + "'required':['name','age'],'additionalProperties':false}",
        new String[] {"{'name':'Ann','age':3}", "{'name': 'Ann', 'age': -12}",
            "{'name':'caf\u00e9 \ud83d\ude00','age':0}", "{'name':'a\\'b\\u00e9','age':1}"},
        new String[] {"{'age':3,'name':'Ann'}", "{'name':'Ann'}", "{'name':'Ann','age':3.5}",
            "{'name':'Ann','age':03}", "{'name':'Ann','age':3,'x':1}", " {'name':'A','age':1}",
            "{'name':'A','age':1} ", "{'name':'a\\ud800','age':1}", "{'name':'tab\there','age':1}"});
  }

  @Test
  void optionalPropertiesKeepCommasRight() {
    check("{'type':'object','properties':{'a':{'type':'boolean'},'b':{'type':'null'},"
            + "'c':{'type':'boolean'}},'required':['b']}",
        new String[] {"{'b':null}", "{'a':true,'b':null}", "{'b':null,'c':false}",
            "{'a':false,'b':null,'c':true}"},
        new String[] {"{}", "{,'b':null}", "{'a':true,,'b':null}", "{'b':null,}", "{'a':true}"});
    check("{'type':'object','properties':{'a':{'type':'boolean'},'b':{'type':'boolean'}}}",
        new String[] {"{}", "{'a':true}", "{'b':true}", "{'a':true, 'b':false}"},
        new String[] {"{,}", "{'b':true,'a':true}", "{'a':true,}"});
  }

  @Test
  void enumsConstsAndUnions() {
    check("{'enum':['red','green',3,null]}", new String[] {"'red'", "3", "null"},
        new String[] {"'blue'", "'Red'", "4"});
    check("{'const':{'k':[1,2]}}", new String[] {"{'k':[1,2]}"}, new String[] {"{'k':[1, 2]}x"});
    check("{'anyOf':[{'type':'integer'},{'type':'string','maxLength':2}]}",
        new String[] {"12", "'ab'", "''"}, new String[] {"'abc'", "1.5", "true"});
    check("{'type':['boolean','null']}", new String[] {"true", "null"}, new String[] {"0"});
  }

  @Test
  void numbersAndBounds() {
    check("{'type':'number'}", new String[] {"0", "-1.25", "3e10", "1.5E-3", "1234567890123456"},
        new String[] {"01", "1.", ".5", "+1", "1e", "NaN", "12345678901234567"});
    check("{'type':'integer','minimum':-5,'maximum':120}",
        new String[] {"-5", "0", "7", "99", "120"}, new String[] {"-6", "121", "-0", "007"});
    check("{'type':'integer','exclusiveMinimum':0,'exclusiveMaximum':10}",
        new String[] {"1", "9"}, new String[] {"0", "10"});
  }

  @Test
  void stringsWithLengthPatternAndFormat() {
    check("{'type':'string','minLength':2,'maxLength':3}",
        new String[] {"'ab'", "'abc'", "'\u00e9\u00e9'", "'\\n\\t'"}, new String[] {"'a'", "'abcd'"});
    check("{'type':'string','pattern':'^[A-Z]{2}-\\\\d{3}$'}",
        new String[] {"'AB-123'"}, new String[] {"'ab-123'", "'AB-1234'", "'AB123'"});
    check("{'type':'string','format':'date'}", new String[] {"'2024-02-29'"},
        new String[] {"'2024-13-01'", "'24-01-01'"});
    check("{'type':'string','format':'uuid'}",
        new String[] {"'123e4567-e89b-12d3-a456-426614174000'"}, new String[] {"'123'"});
    check("{'type':'string','format':'email'}", new String[] {"'a.b@example.com'"},
        new String[] {"'a@b'", "'@example.com'"});
  }

  @Test
  void arrays() {
    check("{'type':'array','items':{'type':'integer'},'minItems':1,'maxItems':3}",
        new String[] {"[1]", "[1, 2]", "[1,2,3]"}, new String[] {"[]", "[1,2,3,4]", "[1,]"});
    check("{'type':'array','items':{'type':'string'}}", new String[] {"[]", "['a','b']"},
        new String[] {"[1]"});
  }

  @Test
  void refsAndBoundedRecursion() {
    String tree = "{'$defs':{'node':{'type':'object','properties':{'v':{'type':'integer'},"
        + "'kids':{'type':'array','items':{'$ref':'#/$defs/node'}}},'required':['v','kids']}},"
        + "'$ref':'#/$defs/node'}";
    check(tree, new String[] {"{'v':1,'kids':[]}", "{'v':1,'kids':[{'v':2,'kids':[]}]}",
            "{'v':1,'kids':[{'v':2,'kids':[{'v':3,'kids':[]}]}]}"},
        new String[] {"{'v':1,'kids':[{'v':2,'kids':[{'v':3,'kids':[{'v':4,'kids':[]}]}]}]}",
            "{'v':1}"});
    check("{'type':'object','properties':{'p':{'$ref':'#/definitions/pt'}},'required':['p'],"
            + "'definitions':{'pt':{'type':'object','properties':{'x':{'type':'number'}},"
            + "'required':['x']}}}",
        new String[] {"{'p':{'x':1.5}}"}, new String[] {"{'p':{}}"});
  }

  @Test
  void freeFormValuesNestToTheBound() {
    Automaton any = SchemaCompiler.compile(schema("{}"));
    assertTrue(accepts(any, "{\"a\":[1,{\"b\":null}],\"c\":\"x\"}"));
    assertTrue(accepts(any, "[[[[1]]]]"));
    assertFalse(accepts(any, "[[[[[1]]]]]"), "deeper than " + SchemaCompiler.FREE_DEPTH);
  }

  @Test
  void unsupportedKeywordsAreNamed() {
    for (String k : new String[] {"not", "patternProperties", "uniqueItems", "multipleOf",
        "if", "prefixItems", "minProperties"}) {
      ConstraintException e = assertThrows(ConstraintException.class,
          () -> SchemaCompiler.compile(schema("{'type':'object','" + k + "':{}}")));
      assertEquals(k, e.keyword());
      assertTrue(e.getMessage().contains("`" + k + "`"), e.getMessage());
    }
    ConstraintException f = assertThrows(ConstraintException.class,
        () -> SchemaCompiler.compile(schema("{'type':'string','format':'ipv6'}")));
    assertEquals("format", f.keyword());
    ConstraintException r = assertThrows(ConstraintException.class,
        () -> SchemaCompiler.compile(schema("{'type':'string','pattern':'(a)\\\\1'}")));
    assertEquals("pattern", r.keyword());
    ConstraintException l = assertThrows(ConstraintException.class,
        () -> SchemaCompiler.compile(schema("{'type':'string','pattern':'a(?=b)'}")));
    assertTrue(l.getMessage().contains("lookaround"), l.getMessage());
  }
}
