package inventory;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

public class Store {
    private final Map<String, Integer> shelves;

    public Store(Map<String, Integer> shelves) {
        this.shelves = shelves;
    }

    public List<String> emptyShelves(int minimum) {
        List<String> names = new ArrayList<>();
        for (Map.Entry<String, Integer> shelf : shelves.entrySet()) {
            if (shelf.getValue() < minimum) {
                names.add(shelf.getKey());
            }
        }
        names.sort(String::compareTo);
        return names;
    }

    public String describe() {
        return "Store with " + shelves.size() + " shelves";
    }
}
